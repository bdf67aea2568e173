/**
 * The grid page (`grid --html`). Pure parts (the y scale, ticks and their labels, the script's CSP
 * hash, escaping) are tested directly. The pages are made from real races on real servers — the
 * CLI run once per cell, the cells summed with the grid's own modeCell — and opened in headless
 * Chromium: no console error, no request beyond the file, one point per cell and mode in each line
 * chart with the embedded JSON's figure, and charts that follow the JSON block when it is edited.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { gridJson, modeCell, type GridAxisJson, type GridCellJson, type GridJson } from '../src/grid/json.js';
import { jsonForScriptBlock } from '../src/html/escape.js';
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
} from '../src/html/grid-charts.js';
import { gridCsp, gridPage, incompleteWords, scriptHashSource } from '../src/html/grid-page.js';
import type { ReportJson } from '../src/report/json.js';
import type { Mode } from '../src/model.js';
import { browserSkip, launchBrowser, openPage } from './helpers/browser.js';
import { runCli } from './helpers/cli.js';
import { decodePng, distinctColours } from './helpers/png.js';
import { forEachServer } from './helpers/servers.js';

const DATA_BLOCK = /(<script type="application\/json" id="emq-grid">\n)([\s\S]*?)(\n<\/script>)/;

function embeddedGrid(html: string): GridJson {
  const match = DATA_BLOCK.exec(html);
  assert.ok(match, 'the page embeds its JSON');
  return JSON.parse(match[2] ?? '') as GridJson;
}

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
    axes: fields.axes ?? [{ flag: 'sweepers', values: [1, 2, 8] }, { flag: 'latency', values: [0, 1] }],
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

  test('the CSP allows exactly the page\'s one inline script, by its hash, and nothing else', () => {
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

/** One cell's race, run by the CLI as a user would, and its wall-clock time. */
async function raceCell(url: string, args: readonly string[]): Promise<{ report: ReportJson; wallMs: number }> {
  const started = performance.now();
  const result = await runCli(['--url', url, '--jobs', '200', '--loop-jobs', '200', '--json', ...args]);
  assert.equal(result.code, 0, result.stderr);
  return { report: JSON.parse(result.stdout) as ReportJson, wallMs: performance.now() - started };
}

/**
 * A grid of real races: one CLI run per combination of the axes' values (the first axis outermost),
 * two at a time, summed per mode with the grid's own modeCell. latency=0 goes to the server
 * directly, as the grid does, so its cells have no measured RTT.
 */
async function realGrid(url: string, axes: readonly GridAxisJson[], modes: readonly Mode[], trials: number): Promise<GridJson> {
  let plan: Record<string, number>[] = [{}];
  for (const axis of axes) plan = plan.flatMap((at) => axis.values.map((value) => ({ ...at, [axis.flag]: value })));
  const started = performance.now();
  const cells: GridCellJson[] = new Array<GridCellJson>(plan.length);
  let next = 0;
  let server: ReportJson['server'] | undefined;
  const worker = async (): Promise<void> => {
    for (let index = next++; index < plan.length; index = next++) {
      const at = plan[index] ?? {};
      const flags = Object.entries(at).flatMap(([flag, value]) => (flag === 'latency' && value === 0 ? [] : [`--${flag}`, String(value)]));
      const { report, wallMs } = await raceCell(url, ['--mode', modes.join(','), '--trials', String(trials), ...flags]);
      server = report.server;
      cells[index] = { index, at, latency: report.latency ?? null, modes: modes.map((mode) => modeCell(mode, report.runs)), runs: report.runs, wallMs: Math.round(wallMs) };
    }
  };
  await Promise.all([worker(), worker()]);
  assert.ok(server);
  return gridJson({ complete: true, server, axes, modes, trials, plannedCells: plan.length, cells, elapsedMs: Math.round(performance.now() - started) });
}

interface Drawn {
  readonly chart: string;
  readonly mode: string;
  readonly cell: number;
  readonly value: string;
  readonly x: number;
  readonly y: number;
  readonly title: string;
}

/** Every mark the charts drew for a cell: its chart, mode, cell, value, place and tooltip. */
function drawnMarks(page: Page): Promise<Drawn[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('svg[data-chart] [data-cell]')].map((node) => ({
      chart: node.closest('svg')?.getAttribute('data-chart') ?? '',
      mode: node.getAttribute('data-mode') ?? '',
      cell: Number(node.getAttribute('data-cell')),
      value: node.getAttribute('data-value') ?? '',
      x: Number(node.getAttribute('cx') ?? node.getAttribute('x')),
      y: Number(node.getAttribute('cy') ?? node.getAttribute('y')),
      title: node.querySelector('title')?.textContent ?? '',
    })),
  );
}

/**
 * Opens a grid page (any: from these tests or from `emq-race grid --html`) in Chromium and checks
 * it against the JSON embedded in the file: no console error, nothing fetched but the file, one
 * point per cell and mode in the anomaly and speed charts (one heatmap square with trials) whose
 * data-value is that cell's figure, the banner exactly when the grid is incomplete, and a screenshot
 * that is not blank. The table is markup written with the page, not drawn from the block: it is
 * checked against the block unless `tableFromData` is false (a block edited after the page was
 * written). Returns the open page and what it drew.
 */
async function checkGridPage(browser: Browser, file: string, options: { colorScheme?: 'light' | 'dark'; tableFromData?: boolean } = {}): Promise<{ page: Page; grid: GridJson; marks: Drawn[] }> {
  const url = pathToFileURL(file).href;
  const { page, requests, errors } = await openPage(browser, url, options.colorScheme ?? 'light');
  assert.deepEqual(errors, [], 'no console errors or warnings (a CSP refusal would be one)');
  assert.deepEqual(requests, [url], 'the page fetched nothing but itself');
  const grid = embeddedGrid(readFileSync(file, 'utf8'));
  const marks = await drawnMarks(page);
  const figures: readonly (readonly [string, (m: GridCellJson['modes'][number]) => number])[] = [
    ['anomaly', (m) => m.doubleRecoveriesPer1000],
    ['speed', (m) => m.jobsPerSec],
    ...(grid.trials > 1 ? [['reproduction', (m: GridCellJson['modes'][number]) => m.reproductionRate] as const] : []),
  ];
  const pairs = grid.cells.flatMap((cell) => cell.modes.map((m) => ({ cell, m })));
  for (const [chart, figure] of figures) {
    const mine = marks.filter((mark) => mark.chart === chart);
    assert.equal(mine.length, pairs.length, `${chart}: one mark per cell and mode`);
    for (const { cell, m } of pairs) {
      const found = mine.filter((mark) => mark.cell === cell.index && mark.mode === m.mode);
      assert.equal(found.length, 1, `${chart}: cell ${cell.index} ${m.mode}`);
      assert.equal(found[0]?.value, String(figure(m)), `${chart}: cell ${cell.index} ${m.mode}`);
      const tooltip = new RegExp(`^${m.mode} · [^\\n]*\\n${m.doubleRecoveriesPer1000} double recoveries per 1,000 jobs [^\\n]*\\n${m.jobsPerSec} jobs/s\\nanomalies in ${m.racedTrials} of ${m.trials} trials?`);
      assert.match(found[0]?.title ?? '', tooltip, 'a tooltip with the figures');
    }
  }
  if (grid.trials <= 1) assert.equal(await page.locator(`#${REPRODUCTION_HOST_ID}`).count(), 0, 'one trial: no heatmap');
  else if (pairs.length > 0) {
    const labels = await page.locator('svg[data-chart=reproduction] text.heat-label').allTextContents();
    assert.deepEqual(labels.sort(), pairs.map(({ m }) => `${m.racedTrials}/${m.trials}`).sort(), 'each square labelled k/n');
  }
  const values = pairs.map(({ m }) => m.jobsPerSec);
  if (pairs.length > 0) assert.equal(await page.locator('svg[data-chart=speed]').getAttribute('data-scale'), yScaleFor(values));
  else assert.equal(await page.locator('p.empty').count(), grid.trials > 1 ? 3 : 2, 'no cell: each chart host says so');
  if (options.tableFromData !== false) {
    // The table is markup written with the page: it shows the JSON as it was when the page was made.
    const table = await page.evaluate(() =>
      [...document.querySelectorAll('#cells-table td[data-cell][data-mode]')].map((td) => `${td.getAttribute('data-cell')} ${td.getAttribute('data-mode')} ${td.getAttribute('data-field')}: ${td.textContent}`),
    );
    const expected = grid.cells.flatMap((cell) =>
      grid.modes.flatMap((mode) => {
        const m = cell.modes.find((item) => item.mode === mode);
        const figure = (field: string, text: string | number) => `${cell.index} ${mode} ${field}: ${m ? text : '—'}`;
        return [figure('doubleRecoveriesPer1000', m?.doubleRecoveriesPer1000 ?? ''), figure('jobsPerSec', m?.jobsPerSec ?? ''), figure('racedTrials', `${m?.racedTrials}/${m?.trials}`)];
      }),
    );
    assert.deepEqual(table, expected, 'the table: each cell\'s figures per mode');
  }
  assert.equal(await page.locator('#cells-table tbody tr[data-cell]').count(), grid.cells.length);
  const banner = page.locator('#incomplete');
  if (grid.complete) assert.equal(await banner.count(), 0);
  else {
    assert.ok(await banner.isVisible(), 'an interrupted grid says so');
    assert.equal(await banner.textContent(), `stopped after ${grid.cells.length} of ${grid.plannedCells} cells: the figures below are those of the cells that finished`);
  }
  const image = decodePng(await page.screenshot({ fullPage: true }));
  assert.ok(image.width >= 900 && image.height >= 300, `screenshot ${image.width}×${image.height}`);
  assert.ok(distinctColours(image) > 8, 'the screenshot is not blank');
  return { page, grid, marks };
}

forEachServer('grid html in Chromium', (handle, kind) => {
  let browser: Browser | undefined;
  let dir: string;
  let grid: GridJson;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'emq-grid-html-'));
    // Two shapes from real races: the usual sweepers × latency with trials on one server kind;
    // three axes, one trial, no latency on the other.
    grid =
      kind.kind === 'redis'
        ? await realGrid(handle.url, [{ flag: 'sweepers', values: [1, 2, 8] }, { flag: 'latency', values: [0, 1] }], ['atomic', 'loop'], 2)
        : await realGrid(handle.url, [{ flag: 'sweepers', values: [2, 8] }, { flag: 'batch', values: [20, 200] }, { flag: 'stalled-before', values: [0, 1] }], ['atomic', 'loop'], 1);
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
      assert.match(marks.find((m) => m.chart === 'speed' && grid.cells[m.cell]?.at.latency === 1)?.title ?? '', /measured round trip: median [\d.]+ ms/);
    } else {
      assert.deepEqual(charts, ['atomic · stalled-before=0', 'atomic · stalled-before=1', 'loop · stalled-before=0', 'loop · stalled-before=1'], 'past two axes: a chart per combination');
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
        cells: grid.cells.map((cell) => (cell !== target ? cell : { ...cell, modes: cell.modes.map((m) => (m !== old ? m : { ...m, doubleRecoveriesPer1000: rate, jobsPerSec: speed })) })),
      };
      writeFileSync(file, withData(html, edited));
      const reloaded = await checkGridPage(browser, file, { tableFromData: false });
      await reloaded.page.close();
      const mark = (marks: readonly Drawn[], chart: string) => marks.find((m) => m.chart === chart && m.cell === target.index && m.mode === 'loop');
      for (const [chart, was, now] of [['anomaly', old.doubleRecoveriesPer1000, rate], ['speed', old.jobsPerSec, speed]] as const) {
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
        server: { ...grid.server, url: `redis://h:1/</script><script>window.pwned = 1</script>`, version: '<img id="injected" src=x onerror="window.pwned = 2">' },
        axes: grid.axes.map((axis) => (axis === second ? { ...axis, flag } : axis)),
        cells: grid.cells.map((cell) => ({ ...cell, at: Object.fromEntries(Object.entries(cell.at).map(([k, v]) => [k === second.flag ? flag : k, v])) })),
      };
      writeFileSync(file, gridPage(hostile, { command: `emq-race grid --vary '${flag}=1'`, generatedAt: 'now' }));
      assert.ok(browser);
      const { page } = await checkGridPage(browser, file);
      assert.equal(await page.evaluate(() => document.querySelectorAll('#injected, img, b').length), 0, 'no element made from data');
      assert.equal(await page.evaluate(() => 'pwned' in window), false);
      const texts = await page.locator('svg[data-chart] text').allTextContents();
      assert.ok(texts.some((text) => text.includes(`${flag}=${second.values[0]}`)), 'the flag drawn as text');
      assert.match((await page.locator('#run').textContent()) ?? '', /<img id="injected"/);
      await page.close();
    });
  }
});
