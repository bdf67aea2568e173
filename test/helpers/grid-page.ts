/**
 * Checks a grid page (from `emq-race grid --html`, or made by a test) in Chromium against the JSON
 * embedded in the file.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import type { GridCellJson, GridJson } from '../../src/grid/json.js';
import { REPRODUCTION_HOST_ID, yScaleFor } from '../../src/html/grid-charts.js';
import { openPage } from './browser.js';
import { pngColours } from './png.js';

/** A figure with its thousands grouped, as the terminal's table prints it. */
const grouped = (n: number): string => n.toLocaleString('en-US', { maximumFractionDigits: 2 });

export const DATA_BLOCK = /(<script type="application\/json" id="emq-grid">\n)([\s\S]*?)(\n<\/script>)/;

export function embeddedGrid(html: string): GridJson {
  const match = DATA_BLOCK.exec(html);
  assert.ok(match, 'the page embeds its JSON');
  return JSON.parse(match[2] ?? '') as GridJson;
}

export interface Drawn {
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
export async function checkGridPage(
  browser: Browser,
  file: string,
  options: { colorScheme?: 'light' | 'dark'; tableFromData?: boolean } = {},
): Promise<{ page: Page; grid: GridJson; marks: Drawn[] }> {
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
      const tooltip = new RegExp(
        `^${m.mode} · [^\\n]* \\(cell ${cell.index + 1}\\)\\n${grouped(m.doubleRecoveriesPer1000)} double recoveries per 1,000 jobs [^\\n]*\\n${grouped(m.jobsPerSec)} jobs/s\\nanomalies in ${m.racedTrials} of ${m.trials} trials?`,
      );
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
      [...document.querySelectorAll('#cells-table td[data-cell][data-mode]')].map(
        (td) => `${td.getAttribute('data-cell')} ${td.getAttribute('data-mode')} ${td.getAttribute('data-field')}: ${td.textContent}`,
      ),
    );
    const expected = grid.cells.flatMap((cell) =>
      grid.modes.flatMap((mode) => {
        const m = cell.modes.find((item) => item.mode === mode);
        const figure = (field: string, text: string | number) => `${cell.index} ${mode} ${field}: ${m ? text : '—'}`;
        return [
          figure('doubleRecoveriesPer1000', m ? grouped(m.doubleRecoveriesPer1000) : ''),
          figure('jobsPerSec', m ? grouped(m.jobsPerSec) : ''),
          figure('racedTrials', `${m?.racedTrials}/${m?.trials}`),
        ];
      }),
    );
    assert.deepEqual(table, expected, "the table: each cell's figures per mode");
    // The list of every point, opened from the keyboard: the same lines as each point's hover note.
    const list = page.locator('#cells details.points');
    if (pairs.length === 0) assert.equal(await list.count(), 0, 'no point: no list');
    else {
      await list.locator('summary').focus();
      await page.keyboard.press('Enter');
      const items = await list.locator('li').evaluateAll((lis) =>
        lis.map((li) => {
          // biome-ignore lint/performance/useDomNodeTextContent: the text as rendered once opened, each <br> a line break, is what a reader gets
          const shown = (li as HTMLElement).innerText;
          return `${li.getAttribute('data-cell')} ${li.getAttribute('data-mode')}\n${shown}`;
        }),
      );
      const notes = marks.filter((mark) => mark.chart === 'anomaly').map((mark) => `${mark.cell} ${mark.mode}\n${mark.title}`);
      assert.deepEqual(items.sort(), notes.sort(), "the list: every point's hover note, as text");
    }
  }
  assert.equal(await page.locator('#cells-table tbody tr[data-cell]').count(), grid.cells.length);
  const banner = page.locator('#incomplete');
  if (grid.complete) assert.equal(await banner.count(), 0);
  else {
    assert.ok(await banner.isVisible(), 'an interrupted grid says so');
    assert.equal(
      await banner.textContent(),
      `stopped after ${grid.cells.length} of ${grid.plannedCells} cells: the figures below are those of the cells that finished`,
    );
  }
  // Colours are counted only up to 9, all that more than 8 needs: the rows below where the ninth
  // turns up are never decoded.
  const image = pngColours(await page.screenshot({ fullPage: true }), 9);
  assert.ok(image.width >= 900 && image.height >= 300, `screenshot ${image.width}×${image.height}`);
  assert.ok(image.colours > 8, 'the screenshot is not blank');
  return { page, grid, marks };
}
