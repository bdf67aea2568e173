/**
 * The grid page (`grid --html`). Pure parts (the y scale, ticks and their labels, the script's CSP
 * hash, escaping) are tested directly. The pages are made from real grids on real servers — run by
 * `emq-race grid --json` — and opened in headless
 * Chromium: no console error, no request beyond the file, one point per cell and mode in each line
 * chart with the embedded JSON's figure, and charts that follow the JSON block when it is edited.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { gridJson, type GridAxisJson, type GridJson } from '../../src/grid/json.js';
import { jsonForScriptBlock } from '../../src/html/escape.js';
import {
  ANOMALY_HOST_ID,
  chartScript,
  drawGridCharts,
  GRID_DATA_ID,
  linearTicks,
  logTicks,
  REPRODUCTION_HOST_ID,
  SPEED_HOST_ID,
  tickLabel,
  yScaleFor,
} from '../../src/html/grid-charts.js';
import { gridCsp, gridPage, incompleteWords, scriptHashSource } from '../../src/html/grid-page.js';
import type { Mode } from '../../src/shared/model.js';
import { browserSkip, launchBrowser } from '../helpers/browser.js';
import { checkGridPage, DATA_BLOCK, embeddedGrid, type Drawn } from '../helpers/grid-page.js';
import { runCli } from '../helpers/cli.js';
import { forOneServerKind } from '../helpers/servers.js';

/** The page with its data block replaced: what a reader editing the file would get. */
function withData(html: string, grid: GridJson): string {
  assert.ok(DATA_BLOCK.test(html));
  return html.replace(DATA_BLOCK, (_, open: string, _old: string, close: string) => `${open}${jsonForScriptBlock(grid)}${close}`);
}

const CONTEXT = { command: 'emq-race grid --vary sweepers=1,2,8 --vary latency=0,1 --trials 2 --html grid.html', generatedAt: '2026-01-01T00:00:00.000Z' };

/** A grid that finished no cell: no race figure in it at all, only the header and the plan. */
function emptyGrid(fields: Partial<Pick<GridJson, 'server' | 'axes'>> = {}): GridJson {
  return gridJson({
    complete: false,
    server: fields.server ?? { kind: 'redis', version: '7.0.15', url: 'redis://127.0.0.1:6379' },
    axes: fields.axes ?? [
      { flag: 'sweepers', values: [1, 2, 8] },
      { flag: 'latency', values: [0, 1] },
    ],
    modes: ['atomic', 'loop'],
    trials: 2,
    plannedCells: 6,
    cells: [],
    elapsedMs: 12,
  });
}

describe('grid html: pure parts', () => {
  test('the y scale turns logarithmic past a spread of 20, never with a value at or below 0', () => {
    assert.equal(yScaleFor([]), 'linear');
    assert.equal(yScaleFor([100, 1500]), 'linear', '15×');
    assert.equal(yScaleFor([1, 20]), 'linear', 'exactly 20× stays linear');
    assert.equal(yScaleFor([1, 21]), 'log');
    assert.equal(yScaleFor([120, 45000, 9000]), 'log');
    assert.equal(yScaleFor([0, 45000]), 'linear', 'a log axis cannot place 0');
    assert.equal(yScaleFor([Number.NaN, 5, 6]), 'linear', 'what is no number is left out');
  });

  test('ticks: linear from 0 in steps of 1, 2, 2.5 or 5 × 10^k; log at powers of ten around the values', () => {
    assert.deepEqual(linearTicks(0), [0, 1], 'all zero: an axis to 1, the line on the floor');
    assert.deepEqual(linearTicks(7), [0, 2, 4, 6, 8]);
    assert.deepEqual(linearTicks(1000), [0, 200, 400, 600, 800, 1000]);
    assert.deepEqual(linearTicks(0.3), [0, 0.1, 0.2, 0.3]);
    assert.deepEqual(linearTicks(11.5), [0, 2.5, 5, 7.5, 10, 12.5]);
    assert.deepEqual(logTicks(37, 24000), [10, 100, 1000, 10000, 100000]);
    assert.deepEqual(logTicks(100, 100), [100, 1000], 'one value: still a decade to span');
    assert.deepEqual(logTicks(0.05, 3), [0.01, 0.1, 1, 10]);
  });

  test('tick labels: 10, 100, 1k, 10k, with a k, M or G past a thousand', () => {
    assert.deepEqual([10, 100, 1000, 10000, 100000, 1e6, 1e9].map(tickLabel), ['10', '100', '1k', '10k', '100k', '1M', '1G']);
    assert.deepEqual([0, 0.25, 2.5, 2500, 123456, 0.01].map(tickLabel), ['0', '0.25', '2.5', '2.5k', '123k', '0.01']);
  });

  test("the CSP allows exactly the page's one inline script, by its hash, and nothing else", () => {
    const html = gridPage(emptyGrid(), CONTEXT);
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
    assert.ok(csp);
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? '');
    assert.equal(scripts.length, 1, 'one script that runs');
    assert.equal(scripts[0], chartScript());
    const hash = scriptHashSource(scripts[0] ?? '');
    assert.match(hash, /^'sha256-[A-Za-z0-9+/]+={0,2}'$/);
    assert.equal(csp, `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src ${hash}`);
    assert.equal(csp, gridCsp(scripts[0] ?? ''));
    assert.doesNotMatch(csp, /script-src[^;]*unsafe/, 'no unsafe-inline for scripts');
    // The drawing code reads the ids the page gives its data block and chart hosts.
    for (const id of [GRID_DATA_ID, ANOMALY_HOST_ID, SPEED_HOST_ID]) {
      assert.ok(drawGridCharts.toString().includes(`'${id}'`), id);
      assert.ok(html.includes(`id="${id}"`), id);
    }
    assert.ok(drawGridCharts.toString().includes(`'${REPRODUCTION_HOST_ID}'`));
    assert.ok(html.includes(`id="${REPRODUCTION_HOST_ID}"`), 'trials 2: the heatmap section');
    assert.ok(!gridPage({ ...emptyGrid(), trials: 1 }, CONTEXT).includes(`id="${REPRODUCTION_HOST_ID}"`), 'one trial: no heatmap');
  });

  test('hostile strings in the data stay text in the markup and cannot close the data block', () => {
    const hostile = `</script><script>alert(1)</script><img src=x onerror=alert(2)>"'&`;
    const grid = emptyGrid({ server: { kind: 'redis', version: hostile, url: `redis://h:1/${hostile}` }, axes: [{ flag: hostile, values: [1] }] });
    const html = gridPage(grid, { command: `emq-race grid --vary '${hostile}=1'`, generatedAt: 'now' });
    assert.ok(!html.includes('<img'), 'no data becomes markup');
    assert.equal(html.match(/<script/g)?.length, 2, 'the data block and the chart script, no other');
    assert.equal(html.match(/<\/script>/g)?.length, 2);
    assert.match(html, /&lt;\/script&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;&lt;img src=x onerror=alert\(2\)&gt;&quot;&#39;&amp;/);
    assert.deepEqual(embeddedGrid(html), grid, 'the JSON reads back unchanged');
    assert.equal(incompleteWords(grid), 'stopped after 0 of 6 cells: the figures below are those of the cells that finished');
    assert.match(html, /<p class="banner" id="incomplete" role="alert">stopped after 0 of 6 cells/);
    assert.equal(incompleteWords({ ...grid, complete: true }), '');
  });
});

/** A grid of real races, run by `emq-race grid` itself as a user would, read back from its --json. */
async function realGrid(url: string, axes: readonly GridAxisJson[], modes: readonly Mode[], trials: number): Promise<GridJson> {
  const vary = axes.flatMap((axis) => ['--vary', `${axis.flag}=${axis.values.join(',')}`]);
  // Twenty jobs a race: the page draws whatever figures come out, and the loop's single sweeper
  // through the proxy takes time in proportion to them.
  const result = await runCli(['grid', '--url', url, ...vary, '--mode', modes.join(','), '--trials', String(trials), '--jobs', '20', '--json']);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout) as GridJson;
}

// The subject is the grid's page and its charts, the same on either server kind: one kind for this file.
forOneServerKind(import.meta.url, 'grid html in Chromium', (handle, kind) => {
  let browser: Browser | undefined;
  let dir: string;
  let grid: GridJson;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emq-grid-html-'));
    // Two shapes from real races: the usual sweepers × latency with trials on one server kind;
    // three axes, one trial, no latency on the other.
    grid =
      kind.kind === 'redis'
        ? await realGrid(
            handle.url,
            [
              // One sweeper and eight: a line of two points per latency, as many as the checks below read.
              { flag: 'sweepers', values: [1, 8] },
              { flag: 'latency', values: [0, 1] },
            ],
            ['atomic', 'loop'],
            2,
          )
        : await realGrid(
            handle.url,
            [
              { flag: 'sweepers', values: [2, 8] },
              { flag: 'batch', values: [20, 200] },
              { flag: 'stalled-before', values: [0, 1] },
            ],
            ['atomic', 'loop'],
            1,
          );
    if (!browserSkip) browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the page draws its charts from the embedded JSON of real races', { skip: browserSkip }, async (t) => {
    const file = join(dir, 'grid.html');
    writeFileSync(file, gridPage(grid, CONTEXT));
    t.diagnostic(`${grid.cells.length} cells: page ${(statSync(file).size / 1024).toFixed(1)} KB`);
    assert.ok(browser);
    const { page, marks } = await checkGridPage(browser, file);
    const charts = await page.locator('svg[data-chart=anomaly]').evaluateAll((svgs) => svgs.map((svg) => svg.getAttribute('aria-label')));
    if (kind.kind === 'redis') {
      assert.deepEqual(charts, ['atomic', 'loop'], 'one anomaly chart per mode');
      const legend = await page.locator('svg[data-chart=anomaly] text.label').allTextContents();
      assert.deepEqual(legend, ['0 ms RTT', '1 ms RTT', '0 ms RTT', '1 ms RTT'], 'one line per latency, named by its RTT');
      // Each line its own dash pattern as well as its colour: told apart without colour.
      const dashes = await page
        .locator('svg[data-chart=anomaly]')
        .evaluateAll((svgs) => svgs.map((svg) => [...svg.querySelectorAll('polyline.series')].map((line) => line.getAttribute('stroke-dasharray') ?? 'solid')));
      for (const chart of dashes) assert.equal(new Set(chart).size, chart.length, `distinct patterns: ${chart.join(' | ')}`);
      assert.match(marks.find((m) => m.chart === 'speed' && grid.cells[m.cell]?.at.latency === 1)?.title ?? '', /measured round trip: median [\d.]+ ms/);
    } else {
      assert.deepEqual(
        charts,
        ['atomic · stalled-before=0', 'atomic · stalled-before=1', 'loop · stalled-before=0', 'loop · stalled-before=1'],
        'past two axes: a chart per combination',
      );
      const legend = await page.locator('svg[data-chart=speed] text.label').allTextContents();
      assert.equal(legend.length, 2 * 4, 'speed: a line per mode and combination of sweepers and stalled-before');
      assert.ok(legend.includes('loop · sweepers=8 · stalled-before=1'), legend.join(' | '));
    }
    assert.equal(await page.evaluate(() => document.querySelectorAll('script').length), 2);
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await page.evaluate(() => getComputedStyle(document.querySelector('svg[data-chart=speed] .backdrop') as Element).fill);
    await page.emulateMedia({ colorScheme: 'light' });
    const light = await page.evaluate(() => getComputedStyle(document.querySelector('svg[data-chart=speed] .backdrop') as Element).fill);
    assert.notEqual(dark, light, 'the charts follow the colour scheme');
    await page.close();
  });

  // Checks that do not depend on the grid's shape run on one server kind each, to keep the file short.
  if (kind.kind === 'redis') {
    test('edit a figure in the JSON block and the chart follows it', { skip: browserSkip }, async () => {
      const file = join(dir, 'tampered.html');
      const html = gridPage(grid, CONTEXT);
      writeFileSync(file, html);
      assert.ok(browser);
      const original = await checkGridPage(browser, file);
      await original.page.close();
      const target = grid.cells[0];
      assert.ok(target);
      const old = target.modes.find((m) => m.mode === 'loop');
      assert.ok(old);
      // Far above every other point, so the axis itself is rescaled around it.
      const largest = Math.max(...grid.cells.flatMap((cell) => cell.modes.map((m) => m.doubleRecoveriesPer1000)));
      const rate = Math.round(largest * 3 + 777);
      const speed = old.jobsPerSec * 50 + 1;
      const edited: GridJson = {
        ...grid,
        cells: grid.cells.map((cell) =>
          cell !== target ? cell : { ...cell, modes: cell.modes.map((m) => (m !== old ? m : { ...m, doubleRecoveriesPer1000: rate, jobsPerSec: speed })) },
        ),
      };
      writeFileSync(file, withData(html, edited));
      const reloaded = await checkGridPage(browser, file, { tableFromData: false });
      await reloaded.page.close();
      const mark = (marks: readonly Drawn[], chart: string) => marks.find((m) => m.chart === chart && m.cell === target.index && m.mode === 'loop');
      for (const [chart, was, now] of [
        ['anomaly', old.doubleRecoveriesPer1000, rate],
        ['speed', old.jobsPerSec, speed],
      ] as const) {
        assert.equal(mark(original.marks, chart)?.value, String(was));
        assert.equal(mark(reloaded.marks, chart)?.value, String(now), `${chart}: the point carries the edited figure`);
        assert.notEqual(mark(reloaded.marks, chart)?.y, mark(original.marks, chart)?.y, `${chart}: the point moved`);
      }
    });

    test('an interrupted grid: a banner, and only the cells that finished', { skip: browserSkip }, async () => {
      const file = join(dir, 'stopped.html');
      const finished = grid.cells.slice(0, Math.ceil(grid.cells.length / 2));
      writeFileSync(file, gridPage({ ...grid, complete: false, cells: finished }, CONTEXT));
      assert.ok(browser);
      const { page, marks } = await checkGridPage(browser, file, { colorScheme: 'dark' });
      assert.equal(marks.filter((m) => m.chart === 'anomaly').length, finished.length * grid.modes.length);
      await page.close();
    });
  } else {
    test('a grid stopped before its first cell still renders', { skip: browserSkip }, async () => {
      const file = join(dir, 'none.html');
      writeFileSync(file, gridPage({ ...grid, complete: false, cells: [] }, CONTEXT));
      assert.ok(browser);
      const { page, marks } = await checkGridPage(browser, file);
      assert.deepEqual(marks, []);
      assert.match((await page.locator('#cells-table').textContent()) ?? '', /no cell finished/);
      await page.close();
    });

    test('hostile strings in the data reach the page as text only', { skip: browserSkip }, async () => {
      const file = join(dir, 'hostile.html');
      const flag = `<b id="injected">"x'&`;
      const second = grid.axes[1];
      assert.ok(second);
      const hostile: GridJson = {
        ...grid,
        server: {
          ...grid.server,
          url: `redis://h:1/</script><script>window.pwned = 1</script>`,
          version: '<img id="injected" src=x onerror="window.pwned = 2">',
        },
        axes: grid.axes.map((axis) => (axis === second ? { ...axis, flag } : axis)),
        cells: grid.cells.map((cell) => ({ ...cell, at: Object.fromEntries(Object.entries(cell.at).map(([k, v]) => [k === second.flag ? flag : k, v])) })),
      };
      writeFileSync(file, gridPage(hostile, { command: `emq-race grid --vary '${flag}=1'`, generatedAt: 'now' }));
      assert.ok(browser);
      const { page } = await checkGridPage(browser, file);
      assert.equal(await page.evaluate(() => document.querySelectorAll('#injected, img, b').length), 0, 'no element made from data');
      assert.equal(await page.evaluate(() => 'pwned' in window), false);
      const texts = await page.locator('svg[data-chart] text').allTextContents();
      assert.ok(
        texts.some((text) => text.includes(`${flag}=${second.values[0]}`)),
        'the flag drawn as text',
      );
      assert.match((await page.locator('#run').textContent()) ?? '', /<img id="injected"/);
      await page.close();
    });
  }
});
