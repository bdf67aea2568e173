// `npm run samples`: every sample of output in README.md and docs/*.md made again from a run of
// the built CLI (see test/helpers/docs-samples.ts for the markers). Each runs as a user's would,
// on its own embedded server, at 80 columns, no colour and no terminal, in a temporary folder
// holding the files the samples name; stdout and stderr are kept in the order they were written.
//   --check       rewrite nothing: run the samples not marked slow and say which differ in shape
//                 (a sample that differs is run again, up to 3 runs, since a race decides some lines)
//   --slow        with --check, the slow ones too
//   --skip-slow   without --check, leave the slow ones as they are
//   --slow-only   only the slow ones
//   --only TEXT   only the samples whose file or arguments contain TEXT
// A sample's setup (a server of its own, an ACL user, a foreign queue: test/helpers/sample-setups.ts)
// is made before its run and undone after it; a sample piped through jq is made only where jq is.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const check = args.includes('--check');
const slow = check ? args.includes('--slow') : !args.includes('--skip-slow');
const slowOnly = args.includes('--slow-only');
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;

execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: ['ignore', 2, 2] });
const { findSamples, lineCount, MAX_README_LINES, outputShape, replaceSamples, sampleBlock, shapeDifferences, writeSampleFiles } = await import(
  '../dist/test/helpers/docs-samples.js'
);
const { withoutProgress } = await import('../dist/test/helpers/progress-lines.js');
const { hasJq, prepareSample, throughJq } = await import('../dist/test/helpers/sample-setups.js');
const { FIGURES } = await import('../dist/src/shared/model.js');
const optionalRows = FIGURES.filter((f) => f.shownWhen?.includes('not-zero')).map((f) => f.heading.replace('\n', ' '));

const BIN = join(process.cwd(), 'bin', 'emq-race.js');
const files = [
  'README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];
const folder = mkdtempSync(join(tmpdir(), 'emq-race-samples-'));
writeSampleFiles(folder);

/**
 * The CLI run to its end, both streams into one file so that their order is the terminal's; with
 * a jq pipe, stdout apart and through jq, after what the run wrote on stderr.
 */
async function runSample(sample) {
  const prepared = await prepareSample(sample);
  try {
    const outFile = join(folder, '.output');
    const errFile = join(folder, '.errors');
    const fd = openSync(outFile, 'w');
    const errFd = sample.jq ? openSync(errFile, 'w') : fd;
    const env = { ...process.env, COLUMNS: '80', NO_COLOR: '1', REDIS_URL: '' };
    delete env.FORCE_COLOR;
    const child = spawn(process.execPath, [BIN, ...prepared.args], { cwd: folder, env, stdio: ['ignore', fd, errFd] });
    const code = await new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('close', resolve);
    });
    closeSync(fd);
    if (!sample.jq) return { code, output: withoutProgress(readFileSync(outFile, 'utf8')) };
    closeSync(errFd);
    const piped = throughJq(sample.jq.args, readFileSync(outFile, 'utf8'));
    return { code: piped.code, output: withoutProgress(readFileSync(errFile, 'utf8')) + piped.output };
  } finally {
    await prepared.stop();
  }
}

/** Runs of a sample, at most, before --check calls its shape different (see below). */
const RUNS = 3;
const jqHere = hasJq();
if (!jqHere) console.error('jq is not on the PATH: the samples piped through it are left as they are');
let differing = 0;
try {
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const samples = findSamples(file, text).filter(
      (s) => (slow || !s.slow) && (!slowOnly || s.slow) && (!only || `${file} ${s.args.join(' ')}`.includes(only)) && (!s.jq || jqHere),
    );
    const blocks = new Map();
    for (const sample of samples) {
      const started = Date.now();
      const { code, output } = await runSample(sample);
      const block = sampleBlock(sample, output, code);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (check) {
        const differencesFrom = (made) => shapeDifferences(outputShape(sample.block.slice(1).join('\n')), outputShape(made.slice(1).join('\n')), optionalRows);
        let differences = differencesFrom(block);
        // A race decides some lines (claim's misplaced job with workers shows "not in every run",
        // docs/consequences.md): a differing shape is run again, up to RUNS in all, and holds if
        // any run has it. Every run's outcome is printed.
        let run = 1;
        for (; differences.length > 0 && run < RUNS; run++) {
          console.error(`${file}:${sample.line + 1} ${sample.args.join(' ')}: differs on run ${run} of ${RUNS}, run again`);
          for (const d of differences) console.error(`  ${d}`);
          const again = await runSample(sample);
          differences = differencesFrom(sampleBlock(sample, again.output, again.code));
        }
        if (differences.length > 0) differing++;
        const which = run > 1 && differences.length === 0 ? ` on run ${run} of ${RUNS}` : '';
        console.error(`${file}:${sample.line + 1} ${sample.args.join(' ')}: ${differences.length === 0 ? `same shape${which}` : 'differs'} (${seconds} s)`);
        for (const d of differences) console.error(`  ${d}`);
      } else {
        blocks.set(sample.line, block);
        console.error(`${file}:${sample.line + 1} ${sample.args.join(' ')}: made (exit ${code}, ${seconds} s)`);
      }
    }
    if (!check && blocks.size > 0) writeFileSync(file, replaceSamples(text, samples, blocks));
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
// A made sample can be longer than the one it replaces (how many sweepers touch the worked
// example's job is chance): say so here rather than in the next test run.
const readmeLines = lineCount(readFileSync('README.md', 'utf8'));
if (!check && readmeLines > MAX_README_LINES) {
  console.error(`README.md is now ${readmeLines} lines, over its ${MAX_README_LINES}: shorten its prose or make the samples again`);
  process.exitCode = 1;
}
if (differing > 0) {
  console.error(`${differing} sample(s) differ in shape from a live run: npm run samples makes them again`);
  process.exitCode = 1;
}
