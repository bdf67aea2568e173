// Produces the README's screenshots from a real run: runs emq-race (main command, explain and
// grid) on a private server with --html, opens each page in headless Chromium and saves a PNG of
// it. The grid is the README's headline grid (about 6 minutes on 2 cores); its table is printed,
// and its JSON saved beside the picture, so the README's sentences can be checked against both.
// With --saved-grid the grid is not run again: its page is written anew from the JSON a run saved
// (DIR/grid-run.json), for a change to the page alone, so the README's figures stay those of that run.
//   node scripts/screenshot.mjs [--out DIR] [--dark] [--only race|explain|grid] [--saved-grid]
//   (after npm run build; needs chromium)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const out = resolve(outIndex >= 0 ? args[outIndex + 1] : 'docs');
const schemes = args.includes('--dark') ? ['light', 'dark'] : ['light'];
const onlyIndex = args.indexOf('--only');
const only = onlyIndex >= 0 ? args[onlyIndex + 1] : undefined;
const savedGrid = args.includes('--saved-grid');
const GRID_ARGS = ['grid', '--vary', 'sweepers=1,2,4,8,16', '--vary', 'latency=0,1,10', '--trials', '3', '--json', '--html', 'grid.html'];

if (!existsSync(CHROMIUM)) {
  console.error(`screenshot: ${CHROMIUM} not found; run scripts/install-browser.sh (or set CHROMIUM_PATH)`);
  process.exit(1);
}
mkdirSync(out, { recursive: true });
const work = mkdtempSync(join(tmpdir(), 'emq-race-shot-'));
const bin = resolve('bin/emq-race.js');
// Run inside the scratch folder with a bare file name, so the page's command line names no local path.
const cli = (...argv) =>
  execFileSync(process.execPath, [bin, ...argv], { cwd: work, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, REDIS_URL: '' } });
const pages = [
  ['race', () => cli('--sweepers', '8', '--jobs', '10000', '--queue', 'demo', '--html', 'race.html')],
  ['explain', () => cli('explain', '--queue', 'demo', '--html', 'explain.html')],
  [
    'grid',
    async () => {
      const saved = join(out, 'grid-run.json');
      if (savedGrid) {
        const { gridPage } = await import(new URL('../dist/src/html/grid-page.js', import.meta.url).href);
        const grid = JSON.parse(readFileSync(saved, 'utf8'));
        // The command line the run's own page named (grid-command.ts: emq-race and its arguments).
        writeFileSync(join(work, 'grid.html'), gridPage(grid, { command: ['emq-race', ...GRID_ARGS].join(' '), generatedAt: new Date().toISOString() }));
        console.log(`grid: the page written again from ${saved}`);
        return;
      }
      const json = cli(...GRID_ARGS);
      writeFileSync(saved, json);
      console.log(`grid: ${saved}`);
    },
  ],
].filter(([name]) => only === undefined || name === only);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
try {
  for (const [name, produce] of pages) {
    await produce();
    for (const scheme of schemes) {
      const page = await browser.newPage({ viewport: { width: 1140, height: 900 }, colorScheme: scheme });
      await page.goto(pathToFileURL(join(work, `${name}.html`)).href);
      const file = join(out, `${name}-report${scheme === 'dark' ? '-dark' : ''}.png`);
      await page.screenshot({ path: file, fullPage: true });
      await page.close();
      console.log(`screenshot: ${file}`);
    }
  }
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
