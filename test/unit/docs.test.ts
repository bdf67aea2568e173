/**
 * The documentation holds together: the README stays short enough to read in minutes, every topic
 * page under docs/ is reachable from it, and no relative link in the README or the pages points at
 * a file or a heading that is not there.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { lineCount, MAX_README_LINES } from '../helpers/docs-samples.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');

const docPages = (): string[] =>
  readdirSync(DOCS)
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(DOCS, name));

/** The lines of a Markdown file that are prose: fenced and indented code blocks left out. */
function proseLines(text: string): string[] {
  const lines: string[] = [];
  let fenced = false;
  for (const line of text.split('\n')) {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (fenced || line.startsWith('    ') || line.startsWith('\t')) continue;
    lines.push(line);
  }
  return lines;
}

/** Link targets in prose, inline code spans removed first so `[x](y)` inside backticks is not a link. */
function linkTargets(text: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(text)) {
    const prose = line.replace(/`[^`]*`/g, (span) => (span.includes('](') ? '' : span));
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) targets.push(match[1] ?? '');
  }
  return targets;
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = (heading[1] ?? '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

const isExternal = (target: string): boolean => /^[a-z][a-z0-9+.-]*:/i.test(target);

test(`the README is at most ${MAX_README_LINES} lines`, () => {
  const lines = lineCount(readFileSync(README, 'utf8'));
  assert.ok(lines <= MAX_README_LINES, `README.md has ${lines} lines; move detail into a page under docs/`);
});

test('every page under docs/ is linked from the README', () => {
  const linked = new Set(
    linkTargets(readFileSync(README, 'utf8'))
      .filter((target) => !isExternal(target))
      .map((target) => join(ROOT, target.split('#')[0] ?? '')),
  );
  const pages = docPages();
  assert.ok(pages.length > 0, 'docs/ has pages');
  for (const page of pages) assert.ok(linked.has(page), `README.md does not link ${relative(ROOT, page)}`);
});

test('every relative link in the README and docs/ points at a file and heading that exist', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of [README, ...docPages()]) {
    for (const target of linkTargets(readFileSync(file, 'utf8'))) {
      if (isExternal(target)) continue;
      checked += 1;
      const [path = '', anchor] = target.split('#');
      const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
      const where = `${relative(ROOT, file)} → ${target}`;
      if (!existsSync(resolved)) broken.push(`${where}: no such file`);
      else if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(readFileSync(resolved, 'utf8')).has(anchor)) {
        broken.push(`${where}: no such heading`);
      }
    }
  }
  assert.ok(checked > 20, `only ${checked} links found: the link reader is broken`);
  assert.deepEqual(broken, []);
});

test('the anchor rule matches GitHub on the headings these pages use', () => {
  const anchors = headingAnchors('## Checking your own script: `--script FILE.lua`\n### Ctrl-C, SIGTERM and a lost server\n## A run\n## A run\n');
  assert.deepEqual([...anchors], ['checking-your-own-script---script-filelua', 'ctrl-c-sigterm-and-a-lost-server', 'a-run', 'a-run-1']);
});

test("the grid's ratio quoted in the README and in docs/grid.md is the one its JSON (docs/grid-run.json) gives", () => {
  const grid = JSON.parse(readFileSync(join(DOCS, 'grid-run.json'), 'utf8')) as {
    cells: { at: Record<string, number>; modes: { mode: string; jobsPerSec: number }[] }[];
  };
  const cell = grid.cells.find((c) => c.at.sweepers === 8 && c.at.latency === 1);
  const rate = (mode: string): number => cell?.modes.find((m) => m.mode === mode)?.jobsPerSec ?? Number.NaN;
  const ratio = Math.round(rate('atomic') / rate('loop')).toLocaleString('en-US');
  const oneMs = /([\d,]+)× the loop's jobs per second at a 1 ms round trip/;
  assert.equal(readFileSync(README, 'utf8').replace(/\n/g, ' ').match(oneMs)?.[1], ratio);
  const page = readFileSync(join(DOCS, 'grid.md'), 'utf8').replace(/\n\s*/g, ' ');
  assert.equal(page.match(oneMs)?.[1], ratio);
  assert.match(page, new RegExp(`at a 1 ms round trip \\(${rate('atomic').toLocaleString('en-US')} against ${rate('loop').toLocaleString('en-US')}\\)`));
});
