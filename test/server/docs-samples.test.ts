/**
 * Every sample of output in README.md and docs/ not marked slow has the shape of a live run of
 * the current code: the same rows, columns and sentences, numbers aside (test/helpers/docs-samples.ts
 * says what a shape is). Each distinct command line runs once per server kind, in-process on an
 * embedded server of that kind, four at a time (a loop's race waits on round trips more than on
 * the cores), at 80 columns in a temporary folder holding the files the samples name (the CLI
 * writes `race.html` there). A sample with a setup (a server of its own, an ACL user, a foreign
 * queue) has it made as `npm run samples` makes it (test/helpers/sample-setups.ts); one piped
 * through jq is skipped where jq is missing. A changed output fails here until `npm run samples`
 * makes the samples again. The slow samples are checked by `npm run samples -- --check --slow`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/program.js';
import { which } from '../../src/server/embedded-server.js';
import { FIGURES } from '../../src/shared/model.js';
import { cliEnv } from '../helpers/cli.js';
import { commandLine, findSamples, outputShape, type Sample, sampleBlock, shapeDifferences, writeSampleFiles } from '../helpers/docs-samples.js';
import { withoutProgress } from '../helpers/progress-lines.js';
import { hasJq, prepareSample, throughJq } from '../helpers/sample-setups.js';
import { SERVER_KINDS } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// Runs at once: each has its own embedded server; more would only share the same cores.
const AT_ONCE = 4;
/** The rows of the figures `which` picks, by their heading as one line. */
const rowsOf = (which: (figure: (typeof FIGURES)[number]) => boolean | undefined): string[] => FIGURES.filter(which).map((f) => f.heading.replace('\n', ' '));
// The rows the table shows only when they are not zero: a live run may have them where the sample has not.
const OPTIONAL_ROWS = rowsOf((f) => f.shownWhen?.includes('not-zero'));
// A trials table shows an anomaly's row only where some trial counted one (unless the figure is
// `trialsAlways`): twenty trials in lockstep may count none where the sample's counted some.
const TRIALS_OPTIONAL_ROWS = rowsOf((f) => f.anomaly && !f.trialsAlways);

const files = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];
const samples = files.flatMap((file) => findSamples(file, readFileSync(join(ROOT, file), 'utf8'))).filter((s) => !s.slow);

interface LiveOutput {
  readonly code: number;
  /** stdout and stderr in the order written, as a terminal shows them. */
  readonly output: string;
  readonly stdout: string;
  readonly stderr: string;
}

/** The command line in this process, each stream kept, and both in one text in the order written. */
async function liveOutput(args: readonly string[]): Promise<LiveOutput> {
  let output = '';
  let stdout = '';
  let stderr = '';
  const code = await run(['node', 'emq-race', ...args], {
    out: (text) => {
      output += text;
      stdout += text;
    },
    err: (text) => {
      output += text;
      stderr += text;
    },
    env: cliEnv({ COLUMNS: '80' }),
    stdoutIsTty: false,
    stderrIsTty: false,
    stdinIsTty: false,
  });
  return { code, output: withoutProgress(output), stdout, stderr: withoutProgress(stderr) };
}

/** A sample's run, its setup made first and undone after; `--server-bin` picks the embedded server's kind, where there is one. */
async function sampleRun(sample: Sample, bin: string): Promise<LiveOutput> {
  const prepared = await prepareSample(sample, bin);
  try {
    // A sample that names its server (`--url`) gets no embedded one: the two are refused together.
    const named = sample.setup.server || sample.args.includes('--url');
    return await liveOutput(named ? prepared.args : [...prepared.args, '--server-bin', bin]);
  } finally {
    await prepared.stop();
  }
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

type LiveRun = Promise<LiveOutput>;
// One server kind is enough for a shape: what the samples print does not change with the kind (its
// name and version are read as placeholders), and every figure is checked on both kinds elsewhere.
const kinds = SERVER_KINDS.filter((kind) => which(kind.bin) !== undefined).slice(0, 1);
const jqHere = hasJq();
// A run is its arguments and its setup: samples that differ only in their jq filter share one.
const runKey = (s: Sample) => JSON.stringify([s.args, s.setup]);
const distinct = [...new Map(samples.filter((s) => jqHere || !s.jq).map((s) => [runKey(s), s] as const)).values()];
let runs: Map<string, LiveRun> | undefined;
function liveRun(bin: string, sample: Sample): LiveRun {
  if (!runs) {
    const keys = kinds.flatMap((kind) => distinct.map((s) => ({ bin: kind.bin, sample: s })));
    const started = limited(
      AT_ONCE,
      keys.map((key) => () => sampleRun(key.sample, key.bin)),
    );
    runs = new Map(keys.map((key, i) => [`${key.bin} ${runKey(key.sample)}`, started[i] as LiveRun]));
  }
  return runs.get(`${bin} ${runKey(sample)}`) as LiveRun;
}

for (const kind of kinds.length > 0 ? kinds : SERVER_KINDS.slice(0, 1)) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed (run scripts/install-servers.sh)` : false;
  describe(`the docs' samples have the shape of a live run [${kind.kind}]`, { skip }, () => {
    for (const sample of samples as readonly Sample[]) {
      const noJq = sample.jq && !jqHere ? 'jq is not installed' : false;
      test(`${sample.file}:${sample.line + 1} ${commandLine(sample).slice(2)}`, { skip: noJq }, async () => {
        const ran = await liveRun(kind.bin, sample);
        // A pipe through jq: what the run wrote on stderr, then what jq made of its stdout.
        const piped = sample.jq ? throughJq(sample.jq.args, ran.stdout) : undefined;
        const output = piped ? ran.stderr + piped.output : ran.output;
        const live = sampleBlock(sample, output, piped ? piped.code : ran.code).slice(1);
        const optional = sample.args.includes('--trials') ? [...OPTIONAL_ROWS, ...TRIALS_OPTIONAL_ROWS] : OPTIONAL_ROWS;
        const differences = shapeDifferences(outputShape(sample.block.slice(1).join('\n')), outputShape(live.join('\n')), optional);
        assert.deepEqual(
          differences,
          [],
          `the sample at ${sample.file}:${sample.line + 1} no longer has the shape of a live run; npm run samples makes it again. The live run printed:\n${live.join('\n')}`,
        );
      });
    }
  });
}
