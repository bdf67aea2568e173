/**
 * Every sample of output in README.md and docs/ not marked slow has the shape of a live run of
 * the current code: the same rows, columns and sentences, numbers aside (test/helpers/docs-samples.ts
 * says what a shape is). Each distinct command line runs once per server kind, in-process on an
 * embedded server of that kind, four at a time (a loop's race waits on round trips more than on
 * the cores), at 80 columns in a temporary folder holding the files the samples name (the CLI
 * writes `race.html` there). A changed output fails here until `npm run samples` makes the
 * samples again.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/program.js';
import { which } from '../../src/server/embedded-server.js';
import { FIGURES } from '../../src/model.js';
import { cliEnv } from '../helpers/cli.js';
import { findSamples, outputShape, type Sample, sampleBlock, shapeDifferences, withoutProgress, writeSampleFiles } from '../helpers/docs-samples.js';
import { oneServerKind } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// Runs at once: each has its own embedded server; more would only share the same cores.
const AT_ONCE = 4;
// The rows the table shows only when they are not zero: a live run may have them where the sample has not.
const OPTIONAL_ROWS = FIGURES.filter((f) => f.shownWhen?.includes('not-zero')).map((f) => f.heading.replace('\n', ' '));

const files = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];
const samples = files.flatMap((file) => findSamples(file, readFileSync(join(ROOT, file), 'utf8'))).filter((s) => !s.slow);

/** The command line in this process, stdout and stderr into one text in the order written, as a terminal shows them. */
async function liveOutput(args: readonly string[]): Promise<{ code: number; output: string }> {
  let output = '';
  const code = await run(['node', 'emq-race', ...args], {
    out: (text) => void (output += text),
    err: (text) => void (output += text),
    env: cliEnv({ COLUMNS: '80' }),
    stdoutIsTty: false,
    stderrIsTty: false,
    stdinIsTty: false,
  });
  return { code, output: withoutProgress(output) };
}

/** Runs `jobs` at most `limit` at a time; each promise settles with its own job. */
function limited<T>(limit: number, jobs: readonly (() => Promise<T>)[]): Promise<T>[] {
  let running = 0;
  const waiting: (() => void)[] = [];
  const slot = async () => {
    while (running >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
  };
  const release = () => {
    running--;
    waiting.shift()?.();
  };
  return jobs.map(async (job) => {
    await slot();
    try {
      return await job();
    } finally {
      release();
    }
  });
}

const startingFolder = process.cwd();
before(() => {
  // The samples name their files bare (`--script broken.lua`, `--html race.html`): they run where those are.
  const folder = tempDir('emq-race-samples-');
  writeSampleFiles(folder);
  process.chdir(folder);
});
after(() => process.chdir(startingFolder));

test('the docs have samples cheap enough to run here', () => {
  assert.ok(samples.length > 0);
});

type LiveRun = Promise<{ code: number; output: string }>;
// One server kind is enough for a shape: what the samples print does not change with the kind (its
// name and version are read as placeholders), and every figure is checked on both kinds elsewhere.
const kinds = oneServerKind(import.meta.url).filter((kind) => which(kind.bin) !== undefined);
// One run per distinct command line and server kind, all in one queue, started when the first test asks.
const distinct = [...new Map(samples.map((s) => [s.args.join(' '), s.args] as const)).values()];
let runs: Map<string, LiveRun> | undefined;
function liveRun(bin: string, args: readonly string[]): LiveRun {
  if (!runs) {
    const keys = kinds.flatMap((kind) => distinct.map((a) => ({ bin: kind.bin, args: a })));
    const started = limited(
      AT_ONCE,
      keys.map((key) => () => liveOutput([...key.args, '--server-bin', key.bin])),
    );
    runs = new Map(keys.map((key, i) => [`${key.bin} ${key.args.join(' ')}`, started[i] as LiveRun]));
  }
  return runs.get(`${bin} ${args.join(' ')}`) as LiveRun;
}

for (const kind of oneServerKind(import.meta.url)) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed (run scripts/install-servers.sh)` : false;
  describe(`the docs' samples have the shape of a live run [${kind.kind}]`, { skip }, () => {
    for (const sample of samples as readonly Sample[]) {
      test(`${sample.file}:${sample.line + 1} emq-race ${sample.args.join(' ')}`, async () => {
        const { code, output } = await liveRun(kind.bin, sample.args);
        const live = sampleBlock(sample, output, code).slice(1);
        const differences = shapeDifferences(outputShape(sample.block.slice(1).join('\n')), outputShape(live.join('\n')), OPTIONAL_ROWS);
        assert.deepEqual(
          differences,
          [],
          `the sample at ${sample.file}:${sample.line + 1} no longer has the shape of a live run; npm run samples makes it again. The live run printed:\n${live.join('\n')}`,
        );
      });
    }
  });
}
