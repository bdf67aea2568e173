/**
 * `emq-race explore --html` from a real exploration on a real server, opened in headless
 * Chromium: the page embeds exactly what --json printed, its outcome matrices and witness diagrams
 * show the JSON's figures (a row per class, a turn per round trip, a mark per switch), it fetches
 * nothing and logs no error under its CSP, and it renders.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import type { ExploreReportJson } from '../../src/explore/render.js';
import { witnessTurns } from '../../src/html/explore-page.js';
import { groupThousands } from '../../src/shared/text.js';
import { browserSkip, launchBrowser, openPage } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { pngColours } from '../helpers/png.js';
import { forOneServerKind } from '../helpers/servers.js';
import { pageReport } from '../helpers/page-report.js';

test('a witness schedule read back as its turns', () => {
  assert.deepEqual(witnessTurns('A:zrangebyscore,B:evalsha,C:exec'), [
    { sweep: 'A', command: 'zrangebyscore' },
    { sweep: 'B', command: 'evalsha' },
    { sweep: 'C', command: 'exec' },
  ]);
});

// The subject is explore's page in Chromium, drawn from the JSON whichever kind ran the
// executions (explore.test.ts holds those to both kinds): one kind runs it.
forOneServerKind(import.meta.url, 'explore --html in Chromium', (handle) => {
  let browser: Browser | undefined;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emq-explore-html-'));
    if (!browserSkip) browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('three sweeps within one preemption: the matrices and the diagrams show the JSON', { skip: browserSkip }, async () => {
    const file = join(dir, 'explore.html');
    const result = await runCli(['explore', '--url', handle.url, '--sweeps', '3', '--max-switches', '1', '--mode', 'loop,atomic', '--json', '--html', file]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^html report: .*explore\.html\n$/);
    const json = JSON.parse(result.stdout) as ExploreReportJson;
    assertMatchesSchema(json, 'explore --json');
    assert.equal(json.sweeps, 3);
    assert.equal(json.maxSwitches, 1);
    const html = readFileSync(file, 'utf8');
    assert.deepEqual(pageReport(html), json, 'the embedded block is exactly what --json printed');
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">/);

    assert.ok(browser);
    const url = pathToFileURL(file).href;
    const { page, requests, errors } = await openPage(browser, url);
    assert.deepEqual(errors, [], 'no console errors or warnings');
    assert.deepEqual(requests, [url], 'the page fetched nothing but itself');
    // Colours are counted only up to 9, all that more than 8 needs: the rows below where the ninth
    // turns up are never decoded.
    const image = pngColours(await page.screenshot({ fullPage: true }), 9);
    assert.ok(image.width >= 900 && image.height >= 300, `screenshot ${image.width}×${image.height}`);
    assert.ok(image.colours > 8, 'the screenshot is not blank');

    const loop = json.modes.find((m) => m.mode === 'loop');
    assert.ok(loop && Object.keys(loop.outcomes).some((o) => o !== 'clean'), 'the loop breaks within one preemption');
    for (const mode of json.modes) {
      const table = page.locator(`table.outcomes[data-mode="${mode.mode}"]`);
      assert.equal(await table.locator('tbody tr').count(), Object.keys(mode.outcomes).length, `${mode.mode}: a row per class`);
      for (const [outcome, schedules] of Object.entries(mode.outcomes)) {
        const cell = (field: string) => table.locator(`tr[data-outcome="${outcome}"] td[data-field="${field}"]`).textContent();
        assert.equal(await cell('schedules'), groupThousands(schedules), `${mode.mode} ${outcome}`);
        assert.equal(await cell('executions'), groupThousands(mode.outcomeExecutions[outcome] ?? -1), `${mode.mode} ${outcome}`);
        const witness = mode.witnesses.find((w) => w.outcome === outcome);
        assert.ok(witness);
        assert.equal(await cell('switches'), String(witness.switches));
      }
      assert.equal(
        Object.values(mode.outcomeExecutions).reduce((a, b) => a + b, 0),
        mode.executions,
      );
      assert.match(
        (await page.locator(`section[data-mode="${mode.mode}"] p.lede`).textContent()) ?? '',
        new RegExp(`^${groupThousands(mode.schedules)} of ${groupThousands(mode.allSchedules)} schedules`),
      );
      for (const witness of mode.witnesses) {
        const figure = page.locator(`figure.witness[data-mode="${mode.mode}"][data-outcome="${witness.outcome}"]`);
        const turns = witnessTurns(witness.schedule);
        assert.equal(await figure.locator('g.turn').count(), turns.length, `${mode.mode} ${witness.outcome}: a row per round trip`);
        assert.equal(await figure.locator('g.turn.switch').count(), witness.switches, `${mode.mode} ${witness.outcome}: a mark per switch`);
        assert.equal(await figure.locator('g.turn').first().getAttribute('data-sweep'), turns[0]?.sweep);
        assert.equal(await figure.locator('.lane-name').count(), 4, 'three sweeps and the server');
        // The same round trips as text, opened from the keyboard.
        await figure.locator('details.turns summary').focus();
        await page.keyboard.press('Enter');
        assert.deepEqual(
          await figure.locator('details.turns li').allTextContents(),
          turns.map((turn, i) => `sweep ${turn.sweep}: ${turn.command.toUpperCase()}${i > 0 && turns[i - 1]?.sweep !== turn.sweep ? ' (a switch)' : ''}`),
          `${mode.mode} ${witness.outcome}: every round trip as text`,
        );
      }
    }
    assert.match(
      (await page.locator('#command').textContent()) ?? '',
      /^emq-race explore --mode loop,atomic --sweeps 3 --max-switches 1 --url redis:\/\/127\.0\.0\.1:\d+\/? --json --html /,
    );
  });
});
