// `npm run samples`: every sample of output in README.md and docs/*.md made again from a run of
// the built CLI (see test/helpers/docs-samples.ts for the markers). Each runs as a user's would,
// on its own embedded server, at 80 columns, no colour and no terminal, in a temporary folder
// holding the files the samples name; stdout and stderr are kept in the order they were written.
//   --check       rewrite nothing: run the samples not marked slow and say which differ in shape
//   --slow        with --check, the slow ones too
//   --skip-slow   without --check, leave the slow ones as they are
//   --slow-only   only the slow ones
//   --only TEXT   only the samples whose file or arguments contain TEXT
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
const { findSamples, outputShape, replaceSamples, sampleBlock, shapeDifferences, withoutProgress, writeSampleFiles } = await import(
  '../dist/test/helpers/docs-samples.js'
);
const { FIGURES } = await import('../dist/src/model.js');
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

/** The CLI run to its end, both streams into one file so that their order is the terminal's. */
function runSample(sampleArgs) {
  const outFile = join(folder, '.output');
  const fd = openSync(outFile, 'w');
  const env = { ...process.env, COLUMNS: '80', NO_COLOR: '1', REDIS_URL: '' };
  delete env.FORCE_COLOR;
  const child = spawn(process.execPath, [BIN, ...sampleArgs], { cwd: folder, env, stdio: ['ignore', fd, fd] });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      closeSync(fd);
      resolve({ code, output: withoutProgress(readFileSync(outFile, 'utf8')) });
    });
  });
}

let differing = 0;
try {
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const samples = findSamples(file, text).filter(
      (s) => (slow || !s.slow) && (!slowOnly || s.slow) && (!only || `${file} ${s.args.join(' ')}`.includes(only)),
    );
    const blocks = new Map();
    for (const sample of samples) {
      const started = Date.now();
      const { code, output } = await runSample(sample.args);
      const block = sampleBlock(sample, output, code);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (check) {
        const differences = shapeDifferences(outputShape(sample.block.slice(1).join('\n')), outputShape(block.slice(1).join('\n')), optionalRows);
        if (differences.length > 0) differing++;
        console.error(`${file}:${sample.line + 1} ${sample.args.join(' ')}: ${differences.length === 0 ? 'same shape' : 'differs'} (${seconds} s)`);
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
if (differing > 0) {
  console.error(`${differing} sample(s) differ in shape from a live run: npm run samples makes them again`);
  process.exitCode = 1;
}
