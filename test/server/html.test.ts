/**
 * The HTML and SVG reports. Pure parts (escaping, the slip-in rule, the command line, the trials
 * view) are tested directly; the pages themselves come from real runs on real servers and are
 * opened in headless Chromium: no console error, no request beyond the file itself, one diagram
 * step per replay step, table values equal to the embedded JSON, and a screenshot that is not blank.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { closeSync, lstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { after, before, describe, test } from 'node:test';
import { groupThousands } from '../../src/shared/text.js';
import type { Browser, Page } from 'playwright-core';
import { DEFAULT_SCHEDULE, SERIAL_SCHEDULE } from '../../src/explain/schedule.js';
import { commandLine, commandPieces, shellQuote } from '../../src/html/command-line.js';
import { escapeMarkup, jsonForScriptBlock } from '../../src/html/escape.js';
import { writeWhole } from '../../src/html/output-file.js';
import { explainPage, explainSvg, racePage } from '../../src/html/page.js';
import type { RaceReportJson, ReplaysJson, RunJson, TrialSummaryJson } from '../../src/html/report-data.js';
import { explainCommandLine, raceCommandLine } from '../../src/html/reproduce.js';
import { slipInIndex } from '../../src/html/sequence-diagram.js';
import { browserSkip, launchBrowser, openPage } from '../helpers/browser.js';
import { BIN, runCli, unwrapped } from '../helpers/cli.js';
import { EmqError, ExitCode } from '../../src/shared/errors.js';
import { oneErrorLine, until } from '../helpers/cli-process.js';
import { pngColours } from '../helpers/png.js';
import { forOneServerKind } from '../helpers/servers.js';
import { pageReport } from '../helpers/page-report.js';
import { DEFAULT_FLAGS_SEEN } from '../helpers/race-flags-seen.js';
import { ANOMALIES } from '../../src/shared/model.js';

const stepsOf = (schedule: string) => schedule.split(',').map((item) => ({ sweep: item.split(':')[0] ?? '' }));
describe('html: pure parts', () => {
  test('markup escaping, and JSON that cannot close its script block', () => {
    assert.equal(escapeMarkup(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    const hostile = { reply: '</script><script>alert(1)</script>', line: '\u2028' };
    const block = jsonForScriptBlock(hostile);
    assert.ok(!block.includes('</script'), block);
    assert.deepEqual(JSON.parse(block), hostile);
  });

  test("the second sweep slips in where it acts inside the other sweep's span", () => {
    assert.equal(slipInIndex(stepsOf(DEFAULT_SCHEDULE)), 1, 'B:detect, right after A:detect');
    assert.equal(slipInIndex(stepsOf(SERIAL_SCHEDULE)), undefined, 'one after the other: no overlap');
    assert.equal(slipInIndex(stepsOf('A:sweep,B:sweep')), undefined, 'two scripts never overlap');
    assert.equal(slipInIndex(stepsOf('A:detect,A:probe,B:detect,A:read,A:move,A:write,B:probe,B:read,B:move,B:write')), 2);
    assert.equal(slipInIndex(stepsOf('A:read,B:read,A:write,B:write')), 1);
  });

  test('the command line spells every setting that is not the default, quotes for the shell and never shows a password', () => {
    assert.equal(shellQuote('race-1'), 'race-1');
    assert.equal(shellQuote("it's here"), `'it'\\''s here'`);
    const line = raceCommandLine(
      {
        ...DEFAULT_FLAGS_SEEN,
        sweepers: 8,
        jobs: 500,
        expect: 'race',
        html: 'my report.html',
      },
      'redis://user:hunter2@db:6379/2',
    );
    assert.equal(line, "emq-race --sweepers 8 --jobs 500 --url 'redis://user:***@db:6379/2' --expect race --html 'my report.html'");
    const scaled = raceCommandLine(
      {
        ...DEFAULT_FLAGS_SEEN,
        mode: ['atomic'],
        sweepers: 4,
        batch: 50,
        maxStalled: 5,
        stalledBefore: 1,
        probeDelay: 2,
        queues: 3,
        cluster: true,
        loopJobs: 500,
        serverStats: true,
        tlsCa: 'ca.pem',
        tlsInsecure: false,
      },
      'rediss://db:6380',
    );
    assert.equal(
      scaled,
      'emq-race --mode atomic --sweepers 4 --batch 50 --max-stalled 5 --stalled-before 1 --probe-delay 2 --loop-jobs 500 --queues 3 --cluster --url rediss://db:6380 --tls-ca ca.pem --server-stats',
      'scale, cluster and TLS flags are part of the rerun',
    );
    // Beside --script or --lib, a --mode given stays, the default's name too: without it the rerun
    // would race the script's (the library's) modes alone.
    const both = ['atomic', 'loop'];
    for (const [extra, words] of [
      [{ script: 's.lua' }, '--script s.lua'],
      [{ lib: 'bullmq' }, '--lib bullmq'],
    ] as const) {
      const given = raceCommandLine({ ...DEFAULT_FLAGS_SEEN, ...extra, mode: both, given: ['--mode'] }, undefined);
      assert.match(given, /^emq-race --mode atomic,loop /, given);
      assert.ok(given.includes(words), given);
      const left = raceCommandLine({ ...DEFAULT_FLAGS_SEEN, ...extra, mode: both, given: [] }, undefined);
      assert.doesNotMatch(left, /--mode/, 'not given: left out, as the run left it');
    }
    assert.doesNotMatch(raceCommandLine({ ...DEFAULT_FLAGS_SEEN, mode: both, given: ['--mode'] }, undefined), /--mode/, 'alone, the default is left out');
    const explain = explainCommandLine(
      { mode: ['atomic'], schedule: SERIAL_SCHEDULE.split(','), maxStalled: 3, stalledBefore: 2, keep: false, json: true, svg: 'r.svg' },
      undefined,
    );
    assert.equal(explain, 'emq-race explain --mode atomic --stalled-before 2 --json --svg r.svg', 'no schedule without a loop, no url for the embedded server');
    const loop = explainCommandLine(
      { mode: ['loop', 'atomic'], schedule: DEFAULT_SCHEDULE.split(','), maxStalled: 3, stalledBefore: 0, keep: false, json: false },
      undefined,
    );
    assert.equal(loop, 'emq-race explain', "explain's own defaults are left out too");
    assert.equal(
      commandLine(
        ['explain'],
        [
          ['--counter', 'client'],
          ['--keep', true],
        ],
      ),
      'emq-race explain --counter client --keep',
    );
    // On the page a line breaks between a flag with its value and the next, never inside one.
    assert.deepEqual(commandPieces("emq-race explain --stalled-before 2 --keep --html 'my report.html' --url 'redis://u:***@h:1'"), [
      'emq-race',
      'explain',
      '--stalled-before 2',
      '--keep',
      "--html 'my report.html'",
      "--url 'redis://u:***@h:1'",
    ]);
  });

  test("with a trials summary the page draws each count's spread and the reproduction rate", () => {
    const run = (mode: string, trial: number, lost: number): RunJson => ({
      mode,
      trial,
      queue: `q-${mode}`,
      sweepers: 4,
      jobs: 100,
      batch: 100,
      maxStalled: 3,
      stalledBefore: 0,
      recoveries: 100 + lost,
      doubleRecoveries: lost,
      duplicatePending: lost,
      lostIncrements: lost,
      extraIncrements: 0,
      lostJobs: 0,
      misplaced: 0,
      unreclaimed: 0,
      wallMs: 10,
      jobsPerSec: 1000,
    });
    const spread = (min: number, median: number, max: number) => ({ min, median, max });
    const zeros = Object.fromEntries(ANOMALIES.map((name) => [name, spread(0, 0, 0)]));
    const trials: TrialSummaryJson[] = [
      { mode: 'atomic', trials: 3, reproductionRate: 0, jobsPerSec: spread(900, 1000, 1100), ...zeros },
      {
        mode: 'loop',
        trials: 3,
        reproductionRate: 2 / 3,
        jobsPerSec: spread(300, 350, 400),
        ...zeros,
        doubleRecoveries: spread(0, 7, 12),
        duplicatePending: spread(0, 7, 12),
        lostIncrements: spread(0, 6, 11),
      },
    ];
    const report: RaceReportJson = {
      version: '0.1.0',
      schema: 1,
      server: { kind: 'valkey', version: '8.0.2', url: 'redis://u:***@h:1' },
      runs: [run('atomic', 1, 0), run('atomic', 2, 0), run('atomic', 3, 0), run('loop', 1, 0), run('loop', 2, 7), run('loop', 3, 12)],
      trials,
    };
    const html = racePage(report, { command: 'emq-race --mode both --trials 3', generatedAt: '2026-01-01T00:00:00.000Z', version: '0.1.0' });
    assert.deepEqual(pageReport(html), report);
    const rows = [...html.matchAll(/<g class="spread-row" data-mode="(\w+)" data-anomaly="(\w+)" data-min="(\d+)" data-median="(\d+)" data-max="(\d+)">/g)];
    assert.equal(rows.length, 2 * ANOMALIES.length, 'one spread per anomaly count per mode');
    const loopLost = rows.find((m) => m[1] === 'loop' && m[2] === 'lostIncrements');
    assert.deepEqual(loopLost?.slice(3).map(Number), [0, 6, 11]);
    assert.match(html, /min 0 · median 6 · max 11/);
    assert.match(html, /anomalies in 2 of 3 trials \(67%\)/);
    assert.match(html, /anomalies in 0 of 3 trials \(0%\)/);
    assert.match(html, /data-mode="loop" data-field="reproductionRate" data-value="0\.6666666666666666">2 of 3 \(67%\)<\/td>/);
    assert.match(html, /data-mode="loop" data-field="lostIncrements">0 \/ 6 \/ 11<\/td>/);
    assert.match(html, /<td class="num" data-run="5" data-field="trial">3<\/td>/, "every trial's run has its column, numbered");
    assert.equal((html.match(/<th class="num" data-run=/g) ?? []).length, 6);
    assert.match(html, /id="trials-table"/);
    assert.ok(!html.includes('class="bar-row"'), 'the spread replaces the single-run bars');
  });

  test('replies and names are escaped in the page and in the SVG', () => {
    const report: ReplaysJson = {
      version: '0.1.0',
      schema: 1,
      server: { kind: 'redis', version: '7.0.15', url: 'redis://127.0.0.1:1' },
      replays: [
        {
          mode: 'loop',
          queue: 'q',
          jobId: '1',
          maxStalled: 3,
          stalledBefore: 0,
          schedule: ['A:read'],
          steps: [{ sweep: 'A', step: 'read', commands: [['HGET', 'emq:{q}:job:1', 'stalled']], replies: ['<img src=x onerror=alert(1)>&'] }],
          readout: {
            recoverCount: 0,
            pendingEntries: 0,
            stalled: null,
            expectedStalled: 0,
            realStalled: 0,
            lostIncrements: 0,
            extraIncrements: 0,
            overcountedStalls: 0,
            endedIn: [],
          },
        },
      ],
    };
    for (const markup of [explainPage(report, { command: 'emq-race explain', generatedAt: 'now', version: '0' }), explainSvg(report)]) {
      assert.ok(!markup.includes('<img'), 'no reply becomes markup');
      assert.match(markup, /&lt;img src=x onerror=alert\(1\)&gt;&amp;/);
    }
  });
});

describe('html: bad output paths are usage errors before any server is touched', () => {
  for (const [what, args, message] of [
    [
      'main --html into a missing folder',
      ['--html', '/nonexistent-folder/r.html'],
      /^emq-race: --html: cannot write \/nonexistent-folder\/r\.html: folder \/nonexistent-folder does not exist\n$/,
    ],
    ['explain --svg onto a folder', ['explain', '--svg', '.'], /^emq-race: --svg: cannot write \.: it is a folder\n$/],
    // A folder whose permission bits let root write, but which takes no file: refused before the run, not after it.
    [
      'grid --html into /proc',
      ['grid', '--html', '/proc/grid.html'],
      /^emq-race: --html: cannot write \/proc\/grid\.html: folder \/proc takes no new file \(\w+\)\n$/,
    ],
  ] as const) {
    test(what, async () => {
      const result = await runCli([...args, '--url', 'redis://127.0.0.1:1']);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    });
  }

  test('a device or a pipe is no file to write: refused, and left what it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-fifo-'));
    try {
      const fifo = join(dir, 'page.html');
      execFileSync('mkfifo', [fifo]);
      for (const [args, path] of [
        [['explain', '--svg', '/dev/null'], '/dev/null'],
        [['grid', '--html', fifo], fifo],
        [['--html', fifo], fifo],
      ] as const) {
        const result = await runCli([...args, '--url', 'redis://127.0.0.1:1']);
        assert.equal(result.code, 2, result.stderr);
        assert.equal(
          oneErrorLine(result.stderr),
          `emq-race: ${args.at(-2)}: cannot write ${path}: it is no plain file (a device, a pipe or a socket); name a file`,
        );
        assert.equal(result.stdout, '');
      }
      assert.ok(statSync('/dev/null').isCharacterDevice(), '/dev/null is still the device');
      assert.ok(statSync(fifo).isFIFO(), 'the pipe is still a pipe');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a symbolic link that leads nowhere is refused before the run, for a page and an exported test alike', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-dangling-'));
    try {
      const link = join(dir, 'out.mjs');
      symlinkSync('nofile.mjs', link);
      for (const args of [
        ['--html', link],
        ['--mode', 'loop', '--seed', '7', '--export-test', link],
      ]) {
        const result = await runCli([...args, '--url', 'redis://127.0.0.1:1']);
        assert.equal(result.code, 2, result.stderr);
        assert.equal(
          oneErrorLine(result.stderr),
          `emq-race: ${args.at(-2)}: cannot write ${link}: it is a symbolic link to nofile.mjs, which does not exist; name the file itself`,
        );
        assert.equal(result.stdout, '');
      }
      assert.deepEqual(readdirSync(dir), ['out.mjs']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a write that fails after the run (the folder replaced by a file, a file made meanwhile) loses that file: exit 4, nothing half-written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-lost-'));
    try {
      const folder = join(dir, 'gone');
      writeFileSync(folder, '');
      assert.throws(
        () => writeWhole(join(folder, 'r.html'), 'page'),
        (err: unknown) => err instanceof EmqError && err.exitCode === ExitCode.outputLost && /^cannot write .*r\.html: ENOTDIR$/.test(err.message),
      );
      // An exported test never goes over a file, even one made after the flag was checked.
      const made = join(dir, 'w.test.mjs');
      writeFileSync(made, 'mine');
      assert.throws(
        () => writeWhole(made, 'test', 'fresh'),
        (err: unknown) =>
          err instanceof EmqError &&
          err.exitCode === ExitCode.outputLost &&
          /a file was made there while the run went on; nothing was overwritten$/.test(err.message),
      );
      assert.equal(readFileSync(made, 'utf8'), 'mine');
      writeWhole(join(dir, 'new.test.mjs'), 'test', 'fresh');
      assert.equal(readFileSync(join(dir, 'new.test.mjs'), 'utf8'), 'test');
      assert.deepEqual(readdirSync(dir).sort(), ['gone', 'new.test.mjs', 'w.test.mjs'], 'no temporary file left');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a page over the file stdout goes to (--html /dev/stdout > file) is refused before the run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-stdout-'));
    try {
      const file = join(dir, 'report.txt');
      const fd = openSync(file, 'w');
      const result = spawnSync(process.execPath, [BIN, '--html', '/dev/stdout', '--url', 'redis://127.0.0.1:1'], {
        stdio: ['ignore', fd, 'pipe'],
        encoding: 'utf8',
      });
      closeSync(fd);
      assert.equal(result.status, 2, result.stderr);
      assert.equal(
        oneErrorLine(result.stderr),
        'emq-race: --html: cannot write /dev/stdout: it is the file stdout goes to, whose output it would replace; name a file of its own',
      );
      assert.equal(readFileSync(file, 'utf8'), '');
      assert.deepEqual(readdirSync(dir), ['report.txt']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('through a symbolic link the page goes to its target, and the link stays a link', () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-link-'));
    try {
      const target = join(dir, 'target.html');
      const link = join(dir, 'link.html');
      writeFileSync(target, 'old');
      symlinkSync(target, link);
      writeWhole(link, 'new');
      assert.ok(lstatSync(link).isSymbolicLink(), 'the link is kept');
      assert.equal(readFileSync(target, 'utf8'), 'new');
      assert.deepEqual(readdirSync(dir).sort(), ['link.html', 'target.html'], 'no temporary file left');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The page's screenshot; taken once more when Chromium's compositor failed the first ("Unable to
 * capture screenshot", met once in a CI run on Node 22 by a full-page capture that passes on every
 * other run): the page is the same for the second, and any other failure is thrown.
 */
async function captured(page: Page, fullPage: boolean): Promise<Buffer> {
  try {
    return await page.screenshot({ fullPage });
  } catch (err) {
    if (!/Unable to capture screenshot/.test(String((err as Error)?.message))) throw err;
    return page.screenshot({ fullPage });
  }
}

/** Loads a page, checks it is quiet and self-contained, and that a screenshot of it shows something. */
async function openChecked(browser: Browser, file: string, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  // A standalone SVG document has no scrollable page to stitch: its screenshot is the viewport.
  const fullPage = file.endsWith('.html');
  const url = pathToFileURL(file).href;
  const { page, requests, errors } = await openPage(browser, url, colorScheme);
  assert.deepEqual(errors, [], 'no console errors or warnings');
  assert.deepEqual(requests, [url], 'the page fetched nothing but itself');
  // Colours are counted only up to 9, all that more than 8 needs: the rows below where the ninth
  // turns up are never decoded.
  const image = pngColours(await captured(page, fullPage), 9);
  assert.ok(image.width >= 900 && image.height >= 300, `screenshot ${image.width}×${image.height}`);
  assert.ok(image.colours > 8, 'the screenshot is not blank');
  return page;
}

interface MainJson {
  runs: Record<string, unknown>[];
}

/** A count as a cell shows it: — where the run did not measure it. */
/** A table cell as the page writes it: a dash where not measured, a number grouped as the terminal groups it. */
const cellText = (value: unknown): string => (value === null ? '—' : typeof value === 'number' ? groupThousands(value) : String(value));
interface ExplainJson {
  replays: { mode: string; steps: { sweep: string; step: string; commands: string[][] }[]; readout: Record<string, unknown> }[];
}

// The subject is the page and its drawings, the same on either server kind: one kind for this file.
forOneServerKind(import.meta.url, 'html in Chromium', (handle) => {
  let browser: Browser | undefined;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emq-html-'));
    if (!browserSkip) browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a page the run cannot write at its end (its folder replaced by a file meanwhile) loses the page, not the report: exit 4', async () => {
    const folder = join(dir, 'replaced');
    mkdirSync(folder);
    const queue = 'race-page-lost';
    const redis = new Redis(handle.url);
    try {
      const running = runCli([
        '--url',
        handle.url,
        '--mode',
        'loop',
        '--jobs',
        '200',
        '--sweepers',
        '2',
        '--probe-delay',
        '3',
        '--queue',
        queue,
        '--json',
        '--html',
        join(folder, 'r.html'),
      ]);
      // Once the run has claimed its queue, the folder goes and a file takes its name.
      await until(30_000, 'the run claimed its queue', async () => (await redis.exists(`emq:{${queue}}:owner`)) === 1);
      rmSync(folder, { recursive: true });
      writeFileSync(folder, '');
      const result = await running;
      assert.equal(result.code, 4, result.stderr);
      assert.equal((JSON.parse(result.stdout) as MainJson).runs.length, 1, 'the report is printed whole');
      assert.equal(
        oneErrorLine(result.stderr),
        `emq-race: --html: cannot write ${join(folder, 'r.html')}: ENOTDIR; the report is printed in full, only that file is lost`,
      );
      assert.deepEqual(await redis.keys(`emq:{${queue}}:*`), [], 'the run removed its keys');
    } finally {
      redis.disconnect();
      rmSync(folder, { force: true });
    }
  });

  test("the page's race table has the terminal's other rows too: a watch run's retries", async () => {
    const file = join(dir, 'watch.html');
    const result = await runCli(['--url', handle.url, '--mode', 'watch', '--jobs', '50', '--sweepers', '4', '--json', '--html', file]);
    assert.equal(result.code, 0, result.stderr);
    const run = (JSON.parse(result.stdout) as MainJson).runs[0];
    const html = readFileSync(file, 'utf8');
    assert.match(html, new RegExp(`<th scope="row">retries</th><td class="num" data-run="0" data-field="retries">${String(run?.retries)}</td>`));
    assert.doesNotMatch(html, /data-field="noscriptFallbacks"/, 'a figure no run has, and no mode always shows, has no row');
  });

  test('the page names the settings that change how its table reads, and with trials what they came to, each run by its trial', async () => {
    const file = join(dir, 'settings.html');
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'loop',
      '--jobs',
      '50',
      '--pending',
      'zset',
      '--workers',
      '2',
      '--trials',
      '2',
      '--html',
      file,
    ]);
    assert.equal(result.code, 0, result.stderr);
    const html = readFileSync(file, 'utf8');
    assert.match(html, /<dt>pending<\/dt><dd>zset \(a sorted set: /);
    assert.match(html, /<dt>workers<\/dt><dd>2<\/dd>/);
    // The terminal's sentence under its trials table, then each run's, named by its trial.
    const summary = /^loop: (clean in both trials|anomalies in \d\/2 \(\d+%\) of the trials.*)\.$/m.exec(unwrapped(result.stdout))?.[0];
    assert.ok(summary, result.stdout);
    assert.ok(html.includes(`<li>${summary}</li>`), `the trials sentence on the page: ${summary}`);
    assert.match(html, /<li>trial 1: /);
    assert.match(html, /<li>trial 2: /);
  });

  test("main command: the page shows the run's own JSON, table and bars alike", { skip: browserSkip }, async () => {
    const file = join(dir, 'race.html');
    // Fifty jobs: four loop sweepers still race on them every time, so the page has an example to show.
    const result = await runCli(['--url', handle.url, '--jobs', '50', '--sweepers', '4', '--json', '--html', file]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^html report: .*race\.html\n$/);
    const json = JSON.parse(result.stdout) as MainJson;
    const html = readFileSync(file, 'utf8');
    assert.deepEqual(pageReport(html), json, 'the embedded block is exactly what --json printed');
    assert.ok(browser);
    const page = await openChecked(browser, file);
    assert.deepEqual(JSON.parse((await page.locator('#emq-report').textContent()) ?? ''), json);
    // Counts no run measured (no workers, no observer) have no column and no bar; one measured
    // by some run only shows — in the others.
    const carried = ANOMALIES.filter((name) => json.runs.some((run) => run[name] !== null && run[name] !== undefined));
    assert.ok(!carried.includes('doubleExecutions') && !carried.includes('windowInNeither'), 'no workers, no observer: not measured');
    for (const [i, run] of json.runs.entries()) {
      for (const field of ['mode', 'sweepers', 'jobs', 'recoveries', ...carried, 'wallMs', 'jobsPerSec']) {
        const cell = page.locator(`#race-table [data-run="${i}"][data-field="${field}"]`);
        assert.equal(await cell.textContent(), cellText(run[field]), `${String(run.mode)} ${field}`);
        if ((ANOMALIES as readonly string[]).includes(field)) {
          assert.match((await cell.getAttribute('class')) ?? '', run[field] === null ? /\bna\b/ : run[field] === 0 ? /\bok\b/ : /\bbad\b/);
        }
      }
      for (const name of carried) {
        const bar = page.locator(`.bar-row[data-mode="${String(run.mode)}"][data-anomaly="${name}"]`);
        assert.equal(await bar.getAttribute('data-value'), run[name] === null ? '' : String(run[name]));
      }
    }
    assert.match((await page.locator('#sources').textContent()) ?? '', /the sweepers' own records \(recoveries, double recoveries\)/);
    const loop = json.runs.find((run) => run.mode === 'loop') as { example: { job: string; commands: unknown[] } | null } | undefined;
    if (loop?.example) {
      assert.equal(await page.locator('#example').getAttribute('data-job'), loop.example.job);
      assert.equal(await page.locator('#example-table tbody tr').count(), loop.example.commands.length, 'one row per command of the example');
    }
    assert.match((await page.locator('#command').textContent()) ?? '', /^emq-race --sweepers 4 --jobs 50 --url redis:\/\/127\.0\.0\.1:\d+\/? --json --html /);
    assert.match((await page.locator('#run').textContent()) ?? '', /on the same server, or drop --url/);
    // The table fits the page: nothing to scroll to on the right.
    assert.equal(
      await page.evaluate("(() => { const box = document.querySelector('#race-table').parentElement; return box.scrollWidth <= box.clientWidth; })()"),
      true,
    );
    const light = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    assert.notEqual(light, dark, 'the page follows the colour scheme');
    await page.emulateMedia({ media: 'print', colorScheme: 'dark' });
    assert.equal(await page.evaluate('getComputedStyle(document.body).backgroundColor'), light, 'paper gets the light scheme');
    // Paper does not scroll: on a page 650 px wide each figure fits it, and none says to scroll.
    await page.setViewportSize({ width: 650, height: 900 });
    const figures = (await page.evaluate(
      "[...document.querySelectorAll('figure')].map((f) => [f.scrollWidth <= f.clientWidth, getComputedStyle(f, '::before').content])",
    )) as [boolean, string][];
    assert.ok(figures.length > 0, 'the page has figures');
    assert.deepEqual(
      figures,
      figures.map(() => [true, 'none']),
    );
    await page.close();
  });

  test("--queues: each row names its queue and node, each mode's total row and bars are the JSON totals", { skip: browserSkip }, async () => {
    const file = join(dir, 'queues.html');
    const result = await runCli(['--url', handle.url, '--queues', '2', '--jobs', '50', '--sweepers', '2', '--json', '--html', file]);
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse(result.stdout) as MainJson & { totals: MainJson['runs'] };
    assert.ok(browser);
    const page = await openChecked(browser, file);
    assert.equal(json.runs.length, 4);
    for (const [i, run] of json.runs.entries()) {
      for (const field of ['queue', 'node', 'recoveries', 'doubleRecoveries']) {
        assert.equal(
          await page.locator(`#race-table [data-run="${i}"][data-field="${field}"]`).textContent(),
          cellText(run[field]),
          `${String(run.queue)} ${field}`,
        );
      }
    }
    for (const [i, total] of json.totals.entries()) {
      const row = (field: string): Promise<string | null> => page.locator(`#race-table [data-total="${i}"][data-field="${field}"]`).textContent();
      assert.equal(await row('mode'), `${String(total.mode)} total`);
      for (const field of ['jobs', 'recoveries', 'doubleRecoveries', 'lostIncrements'])
        assert.equal(await row(field), String(total[field]), `${String(total.mode)} total ${field}`);
      for (const name of ANOMALIES.filter((n) => total[n] !== null && total[n] !== undefined)) {
        assert.equal(await page.locator(`.bar-row[data-mode="${String(total.mode)}"][data-anomaly="${name}"]`).getAttribute('data-value'), String(total[name]));
      }
    }
    assert.match((await page.locator('#command').textContent()) ?? '', / --queues 2 /);
    await page.close();
  });

  test('explain: one diagram step per replay step, in order, and the readout the terminal printed', { skip: browserSkip }, async () => {
    const file = join(dir, 'explain.html');
    const svg = join(dir, 'explain.svg');
    const result = await runCli(['explain', '--url', handle.url, '--json', '--html', file, '--svg', svg]);
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse(result.stdout) as ExplainJson;
    assert.deepEqual(pageReport(readFileSync(file, 'utf8')), json);
    assert.ok(browser);
    const page = await openChecked(browser, file);
    for (const [i, replay] of json.replays.entries()) {
      const steps = page.locator(`[data-replay="${i}"] [data-step]`);
      assert.equal(await steps.count(), replay.steps.length, `${replay.mode}: one step element per step`);
      for (const [k, step] of replay.steps.entries()) {
        const element = steps.nth(k);
        assert.equal(await element.getAttribute('data-step'), String(k + 1));
        assert.equal(`${await element.getAttribute('data-sweep')}:${await element.getAttribute('data-name')}`, `${step.sweep}:${step.step}`);
      }
      for (const field of ['recoverCount', 'pendingEntries', 'stalled', 'lostIncrements']) {
        const value = page.locator(`[data-replay="${i}"] [data-readout="${field}"] .readout-value`);
        assert.equal(await value.textContent(), String(replay.readout[field]), `${replay.mode} ${field}`);
      }
      const slips = await page.locator(`[data-replay="${i}"] .step.slip`).count();
      assert.equal(slips, replay.mode === 'loop' ? 1 : 0, `${replay.mode}: the slip-in is marked where there is one`);
      // The full commands, which the drawing shows only as hover titles, opened from the keyboard.
      const transcript = page.locator(`[data-replay="${i}"] details.transcript`);
      await transcript.locator('summary').focus();
      await page.keyboard.press('Enter');
      assert.equal(await transcript.getAttribute('open'), '', `${replay.mode}: Enter on the summary opens the list`);
      const sent = transcript.locator('[data-command] > code');
      assert.deepEqual(
        await sent.allTextContents(),
        replay.steps.flatMap((step) => step.commands.map((command) => command.join(' '))),
        `${replay.mode}: every command in full, in order`,
      );
      assert.ok(await sent.first().isVisible(), `${replay.mode}: the opened list shows its commands`);
    }
    await page.close();

    const total = json.replays.reduce((n, replay) => n + replay.steps.length, 0);
    const svgPage = await openChecked(browser, svg, 'dark');
    assert.equal(await svgPage.locator('[data-step]').count(), total, 'the standalone SVG has every step');
    await svgPage.close();
  });

  test('explain --counter client: the counter race as a page', { skip: browserSkip }, async () => {
    const file = join(dir, 'counter.html');
    const result = await runCli(['explain', '--counter', 'client', '--url', handle.url, '--html', file]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /html report: .*counter\.html\n$/);
    assert.ok(browser);
    const page = await openChecked(browser, file);
    assert.equal(await page.locator('[data-step]').count(), 4);
    assert.equal(await page.locator('[data-readout="lost"] .readout-value').textContent(), '1');
    await page.close();
  });
});

forOneServerKind(
  import.meta.url,
  'html: a password never reaches a page or a diagram',
  (handle) => {
    test('main --html, explain --html and --svg, on a server that wants a password', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'emq-html-auth-'));
      try {
        const url = handle.url.replace('redis://', 'redis://:hunter2-secret@');
        const files = ['race.html', 'explain.html', 'explain.svg'].map((name) => join(dir, name));
        const main = await runCli(['--url', url, '--mode', 'atomic', '--jobs', '20', '--html', files[0] ?? '']);
        assert.equal(main.code, 0, main.stderr);
        const explain = await runCli(['explain', '--mode', 'atomic', '--html', files[1] ?? '', '--svg', files[2] ?? ''], { REDIS_URL: url });
        assert.equal(explain.code, 0, explain.stderr);
        for (const text of [main.stdout, main.stderr, explain.stdout, explain.stderr, ...files.map((file) => readFileSync(file, 'utf8'))]) {
          assert.ok(!text.includes('hunter2-secret'));
        }
        const port = new URL(handle.url).port;
        assert.match(readFileSync(files[0] ?? '', 'utf8'), new RegExp(`--url &#39;redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}/?&#39;`));
        assert.match(
          readFileSync(files[1] ?? '', 'utf8'),
          new RegExp(`>explain</span> <span class="arg">--mode atomic</span> .*--url &#39;redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}/?&#39;`),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  },
  ['--requirepass', 'hunter2-secret'],
);
