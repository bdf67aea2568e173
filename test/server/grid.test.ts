/**
 * `emq-race grid`: the plan's and the table's arithmetic tested directly; bad axes refused before
 * any server is touched; and real grids on real servers — their cells, trials and sums checked
 * against the runs they carry, the table within 80 columns, the keys all gone afterwards, foreign
 * keys untouched, and a grid stopped by Ctrl-C that still prints its finished cells, marked
 * incomplete, and exits 130.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { cellCount, cellLabel, gridCells, timeLeftMs } from '../../src/grid/plan.js';
import { modeCell, type GridJson } from '../../src/grid/json.js';
import { alignParts, cellParts, formatJobsPerSec, formatRate, layOut, renderGridTables } from '../../src/grid/table.js';
import { anomalyTotal } from '../../src/audit/rules.js';
import { ANOMALIES, jobsPerSec, jobsRaced } from '../../src/shared/model.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine, startCli, within } from '../helpers/cli-process.js';
import { FAILS_AT_RUN_TIME, scriptFile } from '../helpers/scripts.js';
import { allKeys, keyspaceDigest } from '../helpers/keyspace.js';
import { forEachServer, forOneServerKind, type ServerHandle } from '../helpers/servers.js';
import type { Browser } from 'playwright-core';
import { browserSkip, launchBrowser } from '../helpers/browser.js';
import { checkGridPage } from '../helpers/grid-page.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { cellDoneLines } from '../../src/grid/progress.js';

describe('grid: pure parts', () => {
  test('cells are the product of the axes, the first axis slowest', () => {
    const axes = [
      { flag: 'sweepers', values: [1, 2] },
      { flag: 'latency', values: [0, 0.5, 2] },
    ];
    assert.equal(cellCount(axes), 6);
    assert.equal(cellCount([]), 1);
    assert.deepEqual(gridCells(axes), [
      { sweepers: 1, latency: 0 },
      { sweepers: 1, latency: 0.5 },
      { sweepers: 1, latency: 2 },
      { sweepers: 2, latency: 0 },
      { sweepers: 2, latency: 0.5 },
      { sweepers: 2, latency: 2 },
    ]);
    assert.equal(cellLabel(axes, { sweepers: 2, latency: 0.5 }), 'sweepers=2 latency=0.5');
  });

  test("a CI log's lines for a finished cell: the cell and the time, then the rates, each within the width", () => {
    const axes = [
      { flag: 'sweepers', values: [1, 16] },
      { flag: 'latency', values: [0, 0.5] },
    ];
    const cell = {
      index: 2,
      at: { sweepers: 16, latency: 0.5 },
      wallMs: 2400,
      modes: [
        { mode: 'atomic' as const, doubleRecoveriesPer1000: 0 },
        { mode: 'loop' as const, doubleRecoveriesPer1000: 4931.2 },
      ],
    };
    assert.deepEqual(cellDoneLines(axes, 4, cell, '9s in, about 3s left', 80), [
      'emq-race grid: cell 3/4 (sweepers=16 latency=0.5) done in 2s;',
      '  9s in, about 3s left',
      '  double recoveries per 1,000 jobs: atomic 0, loop 4,931',
    ]);
    const many = {
      ...cell,
      modes: (['atomic', 'loop', 'function', 'watch', 'claim', 'script'] as const).map((mode, i) => ({ mode, doubleRecoveriesPer1000: i * 1111.5 })),
    };
    const lines = cellDoneLines([...axes, { flag: 'probe-delay', values: [10] }], 4, { ...many, at: { ...cell.at, 'probe-delay': 10 } }, '9s in', 60);
    assert.ok(lines.length > 2 && lines.every((line) => [...line].length <= 60), lines.join('\n'));
    assert.equal(
      lines.map((line) => line.trim()).join(' '),
      `emq-race grid: cell 3/4 (sweepers=16 latency=0.5 probe-delay=10) done in 2s; 9s in double recoveries per 1,000 jobs: ${many.modes.map((m) => `${m.mode} ${formatRate(m.doubleRecoveriesPer1000)}`).join(', ')}`,
    );
  });

  test('time left comes from the mean cell so far', () => {
    assert.equal(timeLeftMs(1000, 0, 10), undefined);
    assert.equal(timeLeftMs(30_000, 3, 12), 90_000);
    assert.equal(timeLeftMs(30_000, 12, 12), 0);
    // A cell under way is expected to take the mean, less what it has run: its time is not taken
    // for finished cells' (three done in 30 s, 4 s into the fourth: 6 s for it, 8 × 10 s after it).
    assert.equal(timeLeftMs(30_000, 3, 12, 4000), 86_000);
    // Past the mean, it is about to end: the cells after it are what is left.
    assert.equal(timeLeftMs(30_000, 3, 12, 25_000), 80_000);
  });

  test("a mode's cell sums its trials: the rate per 1,000 jobs, jobs/s over all the time, raced trials", () => {
    const clean = Object.fromEntries(ANOMALIES.map((name) => [name, 0])) as Record<(typeof ANOMALIES)[number], number>;
    const runs = [
      { ...clean, mode: 'loop' as const, trial: 1, jobs: 500, wallMs: 1000, doubleRecoveries: 150, duplicatePending: 150 },
      { ...clean, mode: 'loop' as const, trial: 2, jobs: 500, wallMs: 3000, doubleRecoveries: 0 },
      { ...clean, mode: 'atomic' as const, trial: 1, jobs: 500, wallMs: 10, doubleRecoveries: 0 },
    ];
    const loop = modeCell('loop', runs);
    assert.equal(loop.trials, 2);
    assert.equal(loop.jobs, 500);
    assert.equal(loop.doubleRecoveries, 150);
    assert.equal(loop.doubleRecoveriesPer1000, 150, '150 of 1,000 jobs');
    assert.equal(loop.anomalies, 300);
    assert.equal(loop.jobsPerSec, 250, '1,000 jobs in 4 s');
    assert.equal(loop.racedTrials, 1);
    assert.equal(loop.reproductionRate, 0.5);
    assert.equal(modeCell('atomic', runs).anomalies, 0);
    assert.throws(() => modeCell('watch', runs), /no run of watch/);
  });

  test('figures fit their columns, and blocks of columns fit the width with the row names repeated', () => {
    assert.equal(formatRate(0), '0');
    assert.equal(formatRate(0.01), '<0.1');
    assert.equal(formatRate(12.345), '12.3');
    assert.equal(formatRate(1234.5), '1,235');
    assert.equal(formatJobsPerSec(950), '950');
    assert.equal(formatJobsPerSec(12_345), '12.3k');
    assert.equal(formatJobsPerSec(263_000), '263k');
    assert.equal(formatJobsPerSec(1_500_000), '1.5M');
    assert.deepEqual(cellParts(undefined), ['–', '', '']);
    const aligned = alignParts([
      [
        ['0', '83.3k/s', ''],
        ['1,606', '54/s', ''],
      ],
    ]);
    assert.deepEqual(aligned, [['    0 · 83.3k/s', '1,606 ·    54/s']]);
    const columns = Array.from({ length: 9 }, (_, i) => `latency ${i} ms`);
    const lines = layOut(['sweepers 1', 'sweepers 2'], columns, [columns.map(() => '1,234 · 12.3k/s 2/2'), columns.map(() => '0 · 263k/s 0/2')], 80);
    assert.ok(
      lines.every((line) => line.length <= 80),
      lines.join('\n'),
    );
    assert.ok(lines.filter((line) => line.startsWith('sweepers 1')).length > 1, 'the columns went on in a second block');
    assert.equal(lines.filter((line) => line.includes('latency 8 ms')).length, 1, 'every column once');
    // One axis: its one column has no name, and no blank header line stands above the rows.
    assert.deepEqual(layOut(['sweepers 1', 'sweepers 2'], [''], [['0 · 323k/s'], ['0 · 435k/s']], 80), ['sweepers 1  0 · 323k/s', 'sweepers 2  0 · 435k/s']);
  });

  test('the round trips measured, per latency asked: a range over its cells, one figure where they agree, none for the direct cells', () => {
    const cell = (index: number, at: Record<string, number>, median: number | null) => ({
      index,
      at,
      modes: [],
      runs: [],
      wallMs: 1,
      latency:
        median === null
          ? null
          : {
              requestedMs: at.latency,
              jitterMs: 0,
              measuredRttMs: { median, p99: median },
              pings: 200,
              directRttMs: { median: 0.1, p99: 0.2 },
              heldBackMs: 0.3,
            },
    });
    const grid = {
      kind: 'grid',
      complete: true,
      server: { kind: 'redis', version: '7.0.15', url: 'redis://h:1' },
      modes: [],
      trials: 1,
      plannedCells: 6,
      elapsedMs: 1,
      axes: [
        { flag: 'sweepers', values: [1, 2] },
        { flag: 'latency', values: [0, 1, 2] },
      ],
      cells: [
        cell(0, { sweepers: 1, latency: 0 }, null),
        cell(1, { sweepers: 1, latency: 1 }, 1.1),
        cell(2, { sweepers: 1, latency: 2 }, 2.2),
        cell(3, { sweepers: 2, latency: 0 }, null),
        cell(4, { sweepers: 2, latency: 1 }, 1.1),
        cell(5, { sweepers: 2, latency: 2 }, 2.34),
      ],
    } as unknown as GridJson;
    const text = renderGridTables(grid, 200);
    assert.match(text, /^round trip measured through the proxy \(median PING, over its cells\): 1 ms → 1\.10 ms, 2 ms → 2\.20–2\.34 ms$/m);
    assert.doesNotMatch(text, /0 ms →/, 'a direct cell measured nothing through a proxy');
  });
});

test('help grid: its flags, --vary among them, what a cell is, examples, all within 80 columns', async () => {
  const help = await runCli(['help', 'grid'], { COLUMNS: '80' });
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: emq-race grid \[options\]/);
  assert.match(help.stdout, /^ {2}--vary <flag=list> +an axis: a numeric race flag/m);
  assert.match(help.stdout, /^ {2}--jobs <n> .*\(default: 80000,\n {28}or 1000 for a library's modes\)$/m);
  assert.match(help.stdout, /^ {2}--batch <n> .*\(default: 1000\)$/m, 'calls of 1,000: the bound is the server and the round trip, not the tool');
  assert.match(
    help.stdout,
    /^ {2}--loop-jobs <n> [\s\S]*?\(default: 500, or --jobs if\s+smaller\)$/m,
    'the loop on fewer jobs than the one-call modes, its default said once',
  );
  assert.doesNotMatch(help.stdout, /--keep|--csv|--expect|--queue </, 'flags a grid does not take are not offered');
  assert.match(help.stdout, /^Examples:\n {2}emq-race grid\n/m);
  assert.ok(
    help.stdout.split('\n').every((line) => [...line].length <= 80),
    help.stdout,
  );
});

describe('grid: bad axes are usage errors, before any server is touched', () => {
  const cases: [string, string[], RegExp][] = [
    ['not FLAG=LIST', ['--vary', 'sweepers'], /--vary: "sweepers" is not FLAG=LIST/],
    ['an unknown flag', ['--vary', 'speed=1,2'], /--vary: "speed" is not a race flag; a grid varies one of sweepers, jobs/],
    ['a flag name with spaces around it, as the values refuse them', ['--vary', ' sweepers =1,2'], /--vary: " sweepers " is not a race flag/],
    ['a flag that is not numeric', ['--vary', 'mode=1,2'], /--vary: "mode" is not a numeric race flag/],
    ['an empty list', ['--vary', 'sweepers='], /--vary sweepers: an empty value/],
    ['an empty item', ['--vary', 'sweepers=1,,2'], /--vary sweepers: an empty value/],
    ['a value the flag refuses', ['--vary', 'sweepers=1,abc'], /--sweepers: "abc" is not a whole number/],
    ['a value out of range', ['--vary', 'sweepers=1,999'], /--sweepers: 999 is out of range/],
    ['a value listed twice', ['--vary', 'sweepers=1,2,1'], /--vary sweepers: 1 is listed twice/],
    ['a flag varied twice', ['--vary', 'sweepers=1', '--vary', 'sweepers=2'], /--vary: sweepers is varied twice/],
    ['a flag also given', ['--sweepers', '4', '--vary', 'sweepers=1,2'], /--vary: sweepers is also given as --sweepers/],
    [
      'more than 500 cells without --yes',
      [
        '--vary',
        `jobs=${Array.from({ length: 30 }, (_, i) => i + 1).join(',')}`,
        '--vary',
        `sweepers=${Array.from({ length: 20 }, (_, i) => i + 1).join(',')}`,
      ],
      /--vary: 600 cells \(30 × 20\); a grid over 500 cells runs only with --yes/,
    ],
    ['a cell whose flags do not go together', ['--vary', 'stalled-before=1,5', '--max-stalled', '3'], /--stalled-before/],
    ['a flag a grid does not take, with why', ['--keep'], /^emq-race: grid: --keep is not taken: every cell removes its own queues \(docs\/grid\.md\)$/],
    ['a valued flag a grid does not take, with why', ['--queue', 'mine'], /^emq-race: grid: --queue is not taken: every cell names fresh queues of its own/],
    ['--seed, with why', ['--seed', '3'], /^emq-race: grid: --seed is not taken: a seeded run is a single run's/],
    ['latency on a cluster', ['--vary', 'latency=1,2', '--embedded-cluster', '3'], /--latency: not with --embedded-cluster/],
  ];
  for (const [what, args, message] of cases) {
    test(what, async () => {
      const result = await runCli(['grid', ...args, '--url', 'redis://127.0.0.1:1']);
      assert.equal(result.code, 2, result.stderr);
      const lines = result.stderr.split('\n').filter(Boolean);
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0] ?? '', message);
      assert.equal(result.stdout, '');
    });
  }

  test('under --json a refused grid is one error object on stdout', async () => {
    const result = await runCli(['grid', '--vary', 'speed=1', '--json', '--url', 'redis://127.0.0.1:1']);
    assert.equal(result.code, 2);
    const json = JSON.parse(result.stdout) as { error: { exit: number; message: string } };
    assert.equal(json.error.exit, 2);
    assert.match(json.error.message, /"speed" is not a race flag/);
  });
});

/** Each mode's figures of a cell, recomputed from the runs the cell carries. */
function checkSums(grid: GridJson): void {
  for (const cell of grid.cells) {
    for (const figures of cell.modes) {
      const runs = cell.runs.filter((run) => run.mode === figures.mode);
      assert.equal(runs.length, grid.trials, `${figures.mode} in cell ${cell.index}: a run per trial`);
      assert.equal(figures.trials, grid.trials);
      assert.equal(
        figures.doubleRecoveries,
        runs.reduce((n, run) => n + run.doubleRecoveries, 0),
      );
      assert.equal(
        figures.anomalies,
        runs.reduce((n, run) => n + run.anomalies, 0),
      );
      assert.equal(figures.racedTrials, runs.filter((run) => !run.clean).length);
      const jobs = runs.reduce((n, run) => n + run.jobs, 0);
      assert.equal(figures.doubleRecoveriesPer1000, Math.round((figures.doubleRecoveries / jobs) * 100_000) / 100);
      const raced = runs.reduce((n, run) => n + jobsRaced(run), 0);
      assert.equal(
        figures.jobsPerSec,
        jobsPerSec(
          raced,
          runs.reduce((ms, run) => ms + run.wallMs, 0),
        ),
      );
      if (runs.length === 1) assert.equal(figures.jobsPerSec, runs[0]?.jobsPerSec, "a one-trial cell's jobs/s is its run's own");
      for (const run of runs) {
        assert.equal(run.anomalies, anomalyTotal(run), "a run's anomalies are its figures summed");
        for (const axis of grid.axes) if (axis.flag === 'sweepers') assert.equal(run.sweepers, cell.at.sweepers, "the run raced with the cell's sweepers");
      }
    }
  }
}

// One Chromium for every page this file opens, launched for the first and closed after the last.
let chromium: Promise<Browser> | undefined;
const pageBrowser = (): Promise<Browser> => {
  chromium ??= launchBrowser();
  return chromium;
};
after(async () => {
  if (chromium) await (await chromium).close();
});

/** An admin connection to `handle`'s server and a folder for the pages, for the suite's tests. */
function suiteFixture(handle: ServerHandle): { admin: () => Redis; dir: () => string } {
  let admin: Redis | undefined;
  let dir: string | undefined;
  before(async () => {
    admin = await connect(parseServerUrl(handle.url));
    dir = mkdtempSync(join(tmpdir(), 'emq-grid-'));
  });
  after(() => {
    admin?.disconnect();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    admin: () => {
      if (!admin) throw new Error('no admin connection yet');
      return admin;
    },
    dir: () => {
      if (!dir) throw new Error('no folder yet');
      return dir;
    },
  };
}

// What the servers do in a grid (the loop's races, the audits, the keys left) is held to both kinds.
forEachServer('grid on a real server', (handle) => {
  const fixture = suiteFixture(handle);

  test('sweepers 1 and 8 against latency 0 and 1, two trials: every cell audited, the loop races only with company, nothing left behind', async (t) => {
    await fixture.admin().set('someone:else', 'theirs');
    t.after(() => fixture.admin().del('someone:else'));
    const before = await keyspaceDigest(fixture.admin());
    const html = join(fixture.dir(), 'g.html');
    const result = await runCli(
      [
        'grid',
        '--url',
        handle.url,
        '--vary',
        // One sweeper, which cannot race, and eight, which do: a sweeper count between shows nothing more.
        'sweepers=1,8',
        '--vary',
        'latency=0,1',
        '--mode',
        'atomic,loop',
        '--trials',
        '2',
        // Twenty jobs: eight loop sweepers still meet on them in every trial (each job recovered about
        // three times over), and every figure is a sum checked against its runs.
        '--jobs',
        '20',
        '--json',
        '--html',
        html,
      ],
      { COLUMNS: '' },
    );
    assert.equal(result.code, 0, result.stderr);
    const grid = JSON.parse(result.stdout) as GridJson;
    assertMatchesSchema(grid, 'the grid');
    assert.equal(grid.kind, 'grid');
    assert.equal(grid.complete, true);
    assert.equal(grid.stopped, undefined);
    assert.deepEqual(grid.axes, [
      { flag: 'sweepers', values: [1, 8] },
      { flag: 'latency', values: [0, 1] },
    ]);
    assert.deepEqual(grid.modes, ['atomic', 'loop']);
    assert.equal(grid.plannedCells, 4);
    assert.equal(grid.cells.length, 4);
    assert.equal(grid.trials, 2);
    checkSums(grid);
    for (const cell of grid.cells) {
      assert.deepEqual(
        cell.modes.map((m) => m.mode),
        ['atomic', 'loop'],
      );
      if (cell.at.latency === 0) assert.equal(cell.latency, null, 'latency=0 goes to the server directly');
      else {
        assert.equal(cell.latency?.requestedMs, 1);
        assert.ok((cell.latency?.measuredRttMs.median ?? 0) >= 1, 'a round trip through the proxy takes at least what was asked');
      }
      const atomic = cell.modes.find((m) => m.mode === 'atomic');
      assert.equal(atomic?.anomalies, 0, `atomic clean at ${JSON.stringify(cell.at)}`);
    }
    const loopAt = (sweepers: number, latency: number) =>
      grid.cells.find((c) => c.at.sweepers === sweepers && c.at.latency === latency)?.modes.find((m) => m.mode === 'loop');
    for (const latency of [0, 1]) {
      assert.equal(loopAt(1, latency)?.anomalies, 0, 'one loop sweeper alone cannot race');
      assert.ok((loopAt(8, latency)?.doubleRecoveries ?? 0) > 0, `eight loop sweepers race (latency ${latency})`);
      assert.equal(loopAt(8, latency)?.racedTrials, 2);
    }
    assert.match(result.stderr, /^html report: .*g\.html$/m);
    if (!browserSkip) {
      // The page the grid wrote, in Chromium: its charts drawn from the JSON it embeds.
      const { page, grid: embedded, marks } = await checkGridPage(await pageBrowser(), html);
      try {
        assert.deepEqual(
          embedded.cells.map((cell) => cell.modes),
          grid.cells.map((cell) => cell.modes),
          'the page embeds the figures --json printed',
        );
        assert.equal(marks.filter((mark) => mark.chart === 'anomaly').length, 8, '4 cells × 2 modes');
      } finally {
        await page.close();
      }
    }
    assert.match(
      result.stderr,
      /^emq-race grid: cell 4\/4 \(sweepers=8 latency=1\) done in (\d+m )?\d+s;(\n {2}| )(\d+m )?\d+s in, about 0s left\n {2}double recoveries per 1,000 jobs: atomic 0, loop [\d,.]+$/m,
    );
    assert.ok(
      result.stderr.split('\n').every((line) => [...line].length <= 80),
      `the log's lines within 80 columns:\n${result.stderr}`,
    );
    assert.deepEqual(await keyspaceDigest(fixture.admin()), before, 'every key of the grid is gone, the foreign one untouched');
  });
});

// The table's layout and a stop by Ctrl-C are the tool's own rendering and signal handling: they come
// out the same on either kind, so one kind runs them (the first suite holds the grid to both).
forOneServerKind(import.meta.url, 'grid: the table and a stop', (handle) => {
  const fixture = suiteFixture(handle);

  test('the table: a block per mode within 80 columns, the first axis as rows, a line on where each mode raced', async () => {
    const result = await runCli(
      ['grid', '--url', handle.url, '--vary', 'sweepers=1,4', '--vary', 'batch=10,100', '--vary', 'probe-delay=0,1', '--mode', 'atomic,loop', '--jobs', '20'],
      { COLUMNS: '80' },
    );
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.split('\n');
    assert.ok(
      lines.every((line) => [...line].length <= 80),
      result.stdout,
    );
    assert.match(result.stdout, /^atomic, probe-delay=0$/m);
    assert.match(result.stdout, /^loop, probe-delay=1$/m);
    assert.match(result.stdout, /^\s+batch 10\s+batch 100$/m);
    assert.match(result.stdout, /^sweepers 1 +0 · /m);
    assert.match(result.stdout, /^atomic: clean in every cell \(8 cells, 8 runs\)$/m);
    assert.match(result.stdout, /^loop: (anomalies in \d of 8 cells; first at sweepers=4 batch=\d+ probe-delay=\d|clean in every cell)/m);
    assert.deepEqual(await allKeys(fixture.admin()), []);
  });

  test('a grid whose first cell fails ends as one race would: its line alone, no empty table, no page; under --json the error object', async () => {
    const script = scriptFile('grid-fails.lua', FAILS_AT_RUN_TIME);
    const page = join(fixture.dir(), 'failed.html');
    const args = ['grid', '--url', handle.url, '--vary', 'sweepers=1,2', '--script', script, '--jobs', '50', '--html', page];
    const result = await runCli(args);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(oneErrorLine(result.stderr) ?? result.stderr, /^emq-race: the sweep script failed while running: WRONGTYPE/);
    assert.equal(existsSync(page), false, 'no page of no cells');
    const json = await runCli([...args, '--json']);
    assert.equal(json.code, 3);
    assert.equal((JSON.parse(json.stdout) as { error: { exit: number } }).error.exit, 3);
    assert.deepEqual(await allKeys(fixture.admin()), []);
  });

  test("a cell its sweep limit cut short: the line on where the mode had anomalies says so, since those are the limit's", async () => {
    // One sweep of 10 per sweeper leaves most of 300 leases unreclaimed, in every cell.
    const result = await runCli(
      ['grid', '--url', handle.url, '--vary', 'sweepers=1,2', '--mode', 'atomic', '--jobs', '300', '--batch', '10', '--max-sweeps', '1'],
      {
        COLUMNS: '200',
      },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^atomic: anomalies in 2 of 2 cells \(all were cut short by --max-sweeps\); first at sweepers=1$/m);
    assert.deepEqual(await allKeys(fixture.admin()), []);
  });

  test('--latency 0 given to a grid that does not vary latency goes through the proxy, as on the main command; the axis value 0 does not', async () => {
    const given = await runCli(['grid', '--url', handle.url, '--vary', 'sweepers=1,2', '--mode', 'atomic', '--jobs', '200', '--latency', '0', '--json']);
    assert.equal(given.code, 0, given.stderr);
    const cells = (JSON.parse(given.stdout) as GridJson).cells;
    assert.deepEqual(
      cells.map((cell) => cell.latency?.requestedMs),
      [0, 0],
      'a proxy adding nothing, its round trip measured',
    );
    const axis = await runCli(['grid', '--url', handle.url, '--vary', 'latency=0', '--mode', 'atomic', '--jobs', '200', '--json']);
    assert.equal(axis.code, 0, axis.stderr);
    assert.deepEqual(
      (JSON.parse(axis.stdout) as GridJson).cells.map((cell) => cell.latency),
      [null],
      'the axis value 0: the direct connection',
    );
    assert.deepEqual(await allKeys(fixture.admin()), []);
  });

  test('Ctrl-C mid-grid: the finished cells printed and marked incomplete, every queue cleaned, exit 130', async () => {
    const html = join(fixture.dir(), 'stopped.html');
    const cli = startCli([
      'grid',
      '--url',
      handle.url,
      '--vary',
      'sweepers=2,3,4,5,6,7,8',
      '--vary',
      'latency=1,2',
      '--mode',
      'atomic,loop',
      // Twenty jobs through a proxy of 1 or 2 ms: each cell still takes a second or more (its proxy is
      // measured first), and Ctrl-C comes as the first one ends, long before the 14th.
      '--jobs',
      '20',
      '--json',
      '--html',
      html,
    ]);
    await within(60_000, 'the first cell', cli.waitForStderr(/cell 1\/14 .* done in/));
    cli.child.kill('SIGINT');
    const result = await within(60_000, 'the stop', cli.done);
    assert.equal(result.code, 130, result.stderr);
    const grid = JSON.parse(result.stdout) as GridJson;
    assertMatchesSchema(grid, 'the stopped grid');
    assert.equal(grid.complete, false);
    assert.equal(grid.plannedCells, 14);
    assert.ok(grid.cells.length >= 1 && grid.cells.length < 14, `${grid.cells.length} cells`);
    assert.deepEqual(grid.stopped, { exit: 130, message: 'interrupted by SIGINT' });
    checkSums(grid);
    assert.ok(existsSync(html), 'the page of the finished cells was written');
    if (!browserSkip) {
      // The banner, and a point per finished cell and mode: checkGridPage holds the page to its JSON.
      const { page, grid: embedded } = await checkGridPage(await pageBrowser(), html);
      try {
        assert.equal(embedded.complete, false);
      } finally {
        await page.close();
      }
    }
    assert.match(result.stderr, /SIGINT received, cleaning up/);
    assert.deepEqual(await allKeys(fixture.admin()), [], "no key of the grid's queues is left");
  });
});
