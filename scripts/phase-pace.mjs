// Whether each phase of a run keeps its pace as the queue grows: `emq-race --mode atomic` at a small
// size and then at a large one (100,000 and 1,000,000 jobs by default), in pairs one right after
// the other so that both runs of a pair meet the same machine, each on its own embedded server.
// For every phase in the runs' `phasesMs` it prints the large run's jobs/s as a share of the small
// run's (1.00: the same pace; the docs hold seeding, audit and clean-up to 0.8), with each run's
// wall time and peak RSS from /usr/bin/time.
// With --seed-only it takes the tool out: the seeding alone (src/queue/seed.ts, as a run seeds its
// expired jobs; not the live ones it seeds after them, see docs/scale.md) on a fresh embedded
// server per size, and the server's CPU per job read from INFO cpu before and after, which is
// where seeding's pace at a million is decided (docs/scale.md, "Seeding"). With --floor
// beside it, the server's floor for the same work with no script and no code of the tool's: the
// same keys, fields and scores in the same order, written by plain HSET and ZADD commands that
// redis-cli --pipe sends from a file, each size on a fresh server of its own.
// After `npm run build`:
//   node scripts/phase-pace.mjs [--pairs N] [--small N] [--large N] [--sweepers N] [--server-bin PATH] [--seed-only [--floor]] [--json]
import { spawnSync } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TIME = '/usr/bin/time';
const BIN = fileURLToPath(new URL('../bin/emq-race.js', import.meta.url));
const PHASES = ['seed', 'race', 'audit', 'clean'];
/** The share of its small-size pace each held phase must keep (docs/scale.md). */
const HELD = { seed: 0.8, audit: 0.8, clean: 0.8 };

function fail(message) {
  console.error(`phase-pace: ${message}`);
  process.exit(2);
}

function parseArgs(argv) {
  const options = { pairs: 3, small: 100_000, large: 1_000_000, sweepers: 16, serverBin: undefined, seedOnly: false, floor: false, json: false };
  const whole = (flag, text, min) => {
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) fail(`${flag} ${JSON.stringify(text)}: expected a whole number, ${min} or more`);
    return value;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') options.json = true;
    else if (arg === '--seed-only') options.seedOnly = true;
    else if (arg === '--floor') options.floor = true;
    else if (arg === '--pairs') options.pairs = whole(arg, argv[++i], 1);
    else if (arg === '--small') options.small = whole(arg, argv[++i], 1000);
    else if (arg === '--large') options.large = whole(arg, argv[++i], 1000);
    else if (arg === '--sweepers') options.sweepers = whole(arg, argv[++i], 1);
    else if (arg === '--server-bin') options.serverBin = argv[++i] ?? fail('--server-bin needs a path');
    else fail(`unknown argument ${arg}; expected --pairs N --small N --large N --sweepers N --server-bin PATH --seed-only --floor --json`);
  }
  if (options.floor && !options.seedOnly) fail('--floor goes with --seed-only: it measures the seeding alone');
  if (options.large <= options.small) fail(`--large (${options.large}) must be above --small (${options.small})`);
  return options;
}

/** One run of the CLI: its run object, and its wall time and peak RSS as /usr/bin/time measured them. */
function runOnce(jobs, options) {
  const args = [BIN, '--mode', 'atomic', '--sweepers', String(options.sweepers), '--jobs', String(jobs), '--json'];
  if (options.serverBin) args.push('--server-bin', options.serverBin);
  const result = spawnSync(TIME, ['-f', 'phase-pace-time %e %M', process.execPath, ...args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, NO_COLOR: '1' },
  });
  // /usr/bin/time writes its line last; the run's own stderr (progress lines) comes before it.
  const timeLine = result.stderr.split('\n').findLast((line) => line.startsWith('phase-pace-time ')) ?? '';
  const [wallS, rssKb] = timeLine.split(' ').slice(1).map(Number);
  if (result.status !== 0 || !Number.isFinite(wallS)) {
    // The run's own last line, not the two /usr/bin/time adds after it.
    const said = result.stderr.split('\n').filter((line) => line && !line.startsWith('phase-pace-time ') && !line.startsWith('Command exited with'));
    fail(`emq-race --jobs ${jobs} exited ${result.status}: ${said.at(-1) ?? ''}`);
  }
  const run = JSON.parse(result.stdout).runs?.[0];
  if (!run?.phasesMs) fail(`emq-race --jobs ${jobs} printed no phasesMs`);
  return { jobs, phasesMs: run.phasesMs, wallS, peakRssMb: Math.round(rssKb / 1024) };
}

/** The large size's pace as a share of the small one's, to 0.01, from each size's cost per job. */
const share = (smallCostPerJob, largeCostPerJob) => Math.round((smallCostPerJob / largeCostPerJob) * 100) / 100;

/** The large run's jobs/s in `phase` as a share of the small run's. */
const paceShare = (small, large, phase) => share(small.phasesMs[phase] / small.jobs, large.phasesMs[phase] / large.jobs);

const options = parseArgs(process.argv.slice(2));
const pairsText = `${options.pairs} pair${options.pairs === 1 ? '' : 's'}`;
const k = (n) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`);
if (!options.seedOnly && !existsSync(TIME)) fail(`needs ${TIME} (GNU time) to read each run's wall time and peak RSS`);
if (!existsSync(fileURLToPath(new URL('../dist/src/cli/program.js', import.meta.url)))) fail('run `npm run build` first');

/** The server's main-thread CPU seconds so far (INFO cpu), or its whole CPU on a server without the split. */
async function serverCpuSeconds(redis) {
  const info = await redis.info('cpu');
  const field = (name) => Number(new RegExp(`^${name}:([0-9.]+)`, 'm').exec(info)?.[1] ?? Number.NaN);
  const main = field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread');
  return Number.isFinite(main) ? main : field('used_cpu_user') + field('used_cpu_sys');
}

/**
 * The server's CPU µs per job that `work(redis, server)` costs, on a fresh embedded server of its
 * own (INFO cpu read before and after): the one bracket both of seeding's measures share.
 */
async function serverUsPerJob(jobs, dist, work) {
  const { startEmbeddedServer, connect, parseServerUrl } = dist;
  const server = await startEmbeddedServer(options.serverBin ? { bin: options.serverBin } : {});
  try {
    const redis = await connect(parseServerUrl(server.url));
    try {
      const before = await serverCpuSeconds(redis);
      await work(redis, server);
      const after = await serverCpuSeconds(redis);
      return Math.round(((after - before) * 1e6 * 100) / jobs) / 100;
    } finally {
      redis.disconnect();
    }
  } finally {
    await server.stop();
  }
}

/** Seeds `jobs` on a fresh embedded server as a run seeds them, with the tool's modules `dist`; the server's CPU µs per job. */
async function seedAlone(jobs, dist) {
  const { queueKeys, randomQueueName, seedJobs, newRunId, serverTimeMs } = dist;
  return serverUsPerJob(jobs, dist, async (redis) => {
    const keys = queueKeys(randomQueueName());
    await seedJobs(redis, keys, { jobs, runId: newRunId(), stalledBefore: 0, serverNowMs: await serverTimeMs(redis) });
  });
}

/** RESP for one command, as redis-cli --pipe reads it. */
const resp = (words) => `*${words.length}\r\n${words.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('')}`;

/**
 * A file of the plain commands that write what seed-jobs.lua writes for `jobs` jobs, in the order
 * it writes them (the same slices, the same ids, each job's HSET, a ZADD every 3,000 members).
 */
async function floorCommands(jobs, dist, file) {
  const { queueKeys, randomQueueName, newRunId, seedSlices, forEachSliceId, expiredDeadline } = dist;
  const keys = queueKeys(randomQueueName());
  const runId = newRunId();
  const now = Date.now();
  const out = createWriteStream(file);
  let text = '';
  let scored = [];
  const flush = async (force) => {
    if (!force && text.length < 1 << 20) return;
    if (!out.write(text)) await new Promise((resolve) => out.once('drain', resolve));
    text = '';
  };
  for (const slice of seedSlices(1, jobs, 5000)) {
    const ids = [];
    forEachSliceId(slice, (id) => ids.push(id));
    for (const id of ids) {
      text += resp(['HSET', keys.job(id), 'state', 'active', 'stalled', '0', 'run', runId]);
      scored.push(String(expiredDeadline(now, id)), String(id));
      if (scored.length === 6000) {
        text += resp(['ZADD', keys.active, ...scored]);
        scored = [];
      }
      await flush(false);
    }
    // seed-jobs.lua sends what it gathered at the end of each call.
    if (scored.length > 0) text += resp(['ZADD', keys.active, ...scored]);
    scored = [];
  }
  await flush(true);
  await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve())));
}

/** The same jobs as plain commands through redis-cli --pipe on a fresh embedded server: the server's CPU µs per job. */
async function floorAlone(jobs, dist) {
  const folder = mkdtempSync(join(tmpdir(), 'phase-pace-'));
  try {
    const file = join(folder, 'commands.resp');
    await floorCommands(jobs, dist, file);
    return await serverUsPerJob(jobs, dist, async (_redis, server) => {
      const input = openSync(file, 'r');
      let piped;
      try {
        piped = spawnSync('redis-cli', ['-p', new URL(server.url).port, '--pipe'], { stdio: [input, 'pipe', 'pipe'], encoding: 'utf8' });
      } finally {
        closeSync(input);
      }
      if (piped.error || piped.status !== 0 || !/errors: 0,/.test(piped.stdout)) {
        fail(`redis-cli --pipe: ${piped.error?.message ?? `${piped.stdout}${piped.stderr}`.trim().split('\n').at(-1)}`);
      }
    });
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

if (options.seedOnly) {
  const load = (path) => import(new URL(`../dist/src/${path}`, import.meta.url).href);
  const modules = ['server/embedded-server.js', 'server/connection.js', 'queue/keys.js', 'queue/seed.js', 'queue/owner-marker.js', 'server/clock.js'];
  const dist = Object.assign({}, ...(await Promise.all(modules.map(load))));
  if (options.floor && spawnSync('redis-cli', ['--version']).status !== 0) fail('--floor needs redis-cli on PATH (Debian: apt-get install redis-tools)');
  const pairs = [];
  for (let pair = 1; pair <= options.pairs; pair++) {
    // With --floor each size's two measures run back to back, so both meet the same machine.
    const small = await seedAlone(options.small, dist);
    const smallFloor = options.floor ? await floorAlone(options.small, dist) : undefined;
    const large = await seedAlone(options.large, dist);
    const largeFloor = options.floor ? await floorAlone(options.large, dist) : undefined;
    pairs.push({
      pair,
      smallServerUsPerJob: small,
      largeServerUsPerJob: large,
      share: share(small, large),
      ...(options.floor ? { smallFloorUsPerJob: smallFloor, largeFloorUsPerJob: largeFloor, floorShare: share(smallFloor, largeFloor) } : {}),
    });
  }
  if (options.json) console.log(JSON.stringify({ node: process.version, small: options.small, large: options.large, pairs }));
  else {
    console.log(`seeding alone on a fresh server per size, the server's CPU µs per job (INFO cpu), ${pairsText}:`);
    for (const p of pairs) {
      console.log(
        `pair ${p.pair}: ${k(options.small)} jobs ${p.smallServerUsPerJob} µs, ${k(options.large)} jobs ${p.largeServerUsPerJob} µs: ${p.share.toFixed(2)} of the pace`,
      );
      if (options.floor)
        console.log(
          `  the floor, plain commands by redis-cli --pipe: ${k(options.small)} ${p.smallFloorUsPerJob} µs, ${k(options.large)} ${p.largeFloorUsPerJob} µs: ${p.floorShare.toFixed(2)} of the pace`,
        );
    }
  }
  process.exit(0);
}

const pairs = [];
for (let pair = 1; pair <= options.pairs; pair++) {
  const small = runOnce(options.small, options);
  const large = runOnce(options.large, options);
  const shares = Object.fromEntries(PHASES.map((phase) => [phase, paceShare(small, large, phase)]));
  pairs.push({ pair, shares, small, large });
  if (!options.json) console.error(`phase-pace: pair ${pair}/${options.pairs} done`);
}
const lowest = Object.fromEntries(PHASES.map((phase) => [phase, Math.min(...pairs.map((p) => p.shares[phase]))]));
const held = Object.fromEntries(Object.entries(HELD).map(([phase, share]) => [phase, pairs.every((p) => p.shares[phase] >= share)]));

if (options.json) {
  console.log(JSON.stringify({ node: process.version, sweepers: options.sweepers, small: options.small, large: options.large, pairs, lowest, held }));
} else {
  console.log(`emq-race --mode atomic --sweepers ${options.sweepers} --json, ${k(options.small)} then ${k(options.large)} jobs, ${pairsText}:`);
  console.log(`the ${k(options.large)} run's jobs/s in each phase as a share of the ${k(options.small)} run's (1.00: the same pace)`);
  console.log(`pair  ${PHASES.map((p) => p.padStart(6)).join('')}   wall ${k(options.small)} / ${k(options.large)}   peak RSS`);
  for (const p of pairs) {
    const cells = PHASES.map((phase) => p.shares[phase].toFixed(2).padStart(6)).join('');
    console.log(
      `${String(p.pair).padEnd(4)}  ${cells}   ${p.small.wallS.toFixed(1)} s / ${p.large.wallS.toFixed(1)} s   ${p.small.peakRssMb} MB / ${p.large.peakRssMb} MB`,
    );
  }
  const verdict = Object.entries(HELD).map(
    ([phase, share]) => `${phase} ${held[phase] ? 'kept' : 'did not keep'} ${share} in every pair (lowest ${lowest[phase].toFixed(2)})`,
  );
  console.log(`${verdict.join(', ')}`);
}
