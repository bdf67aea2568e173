/**
 * `npm run bench`: starts its own server of each installed kind, measures every size in a child
 * process of its own, then what a round trip costs each mode (latency.ts), and prints a table (or,
 * with --json, one JSON object and nothing else). Every ratio compares two figures taken on the
 * same server one after the other (the sizes' in one process, the latency part's in alternating
 * runs of the tool), so the machine's speed cancels out.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import Table from 'cli-table3';
import { connect, parseServerInfo, parseServerUrl } from '../server/connection.js';
import { SERVER_BINARIES, startEmbeddedServer, which, type EmbeddedServer } from '../server/embedded-server.js';
import { msFlag, parseIntFlag } from '../cli/options.js';
import { processIo } from '../cli/process-io.js';
import { best, ratio, rotated, type FloorFigures, type FloorOptions, type MeasureOptions, type SizeFigures, type SweepFigures } from './measure.js';
import { bestOf, LATENCY_CASES, measureLatency, type LatencyFigures } from './latency.js';
import { plural, rangeText } from '../shared/text.js';
import { defaultLive, LIMITS, type Io } from '../shared/model.js';

const run = promisify(execFile);
const CHILD = fileURLToPath(new URL('./size-child.js', import.meta.url));
/** The tool as users run it, from the compiled bench (dist/src/bench/) up to the package's bin/. */
const CLI = fileURLToPath(new URL('../../../bin/emq-race.js', import.meta.url));
const DEFAULT_SIZES = [10_000, 100_000, 1_000_000];
const DEFAULT_OUT = 'bench-results/bench.json';

interface BenchFlags {
  readonly sizes: number[];
  readonly json: boolean;
  readonly batch: number;
  readonly repeats: number | undefined;
  /** Where the table mode also writes the JSON; --json prints it instead (and writes only with --out). */
  readonly out: string | undefined;
  /** Round trip (ms) the latency part adds through the proxy; 0 leaves the part out. */
  readonly latency: number;
  /** Only the latency part, no sizes. */
  readonly latencyOnly: boolean;
}

/** The latency part's round trip unless --latency says otherwise: the one a reader tries first. */
export const BENCH_LATENCY_MS = 2;

export function parseBenchArgs(argv: readonly string[]): BenchFlags {
  let sizes = DEFAULT_SIZES;
  let json = false;
  let batch = 1000;
  let repeats: number | undefined;
  let out: string | undefined;
  let latency = BENCH_LATENCY_MS;
  let latencyOnly = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--json') json = true;
    else if (arg === '--sizes') sizes = (argv[++i] ?? '').split(',').map((s) => parseIntFlag('--sizes', LIMITS.jobs, s));
    else if (arg === '--out') out = argv[++i] ?? '';
    else if (arg === '--repeats') repeats = parseIntFlag('--repeats', { min: 1, max: 20 }, argv[++i] ?? '');
    else if (arg === '--batch') batch = parseIntFlag('--batch', LIMITS.batch, argv[++i] ?? '');
    else if (arg === '--latency') latency = msFlag('--latency', LIMITS.latency)(argv[++i] ?? '');
    else if (arg === '--latency-only') latencyOnly = true;
    else throw new Error(`unknown argument ${arg}; expected --sizes N,N,… --batch N --repeats N --latency MS --latency-only --out FILE --json`);
  }
  if (latencyOnly && latency === 0) throw new Error('--latency-only with --latency 0 measures nothing');
  return { sizes: latencyOnly ? [] : sizes, json, batch, repeats, out, latency, latencyOnly };
}

/**
 * The CLI's own race (`emq-race --mode atomic`, a child process, the whole run as a user starts
 * it) beside the floor at the same size and sweeper count, the two in turn: how much of what the
 * script can do a real run gets.
 */
export interface CliRaceFigures {
  /** The sweeper count the size's shipped sweep was fastest at. */
  readonly sweepers: number;
  /** The live leases beside the expired jobs on both sides' queues: the CLI's default for the size. */
  readonly live: number;
  /** Turns of each side; the CLI goes first in the even ones, the floor in the odd ones. */
  readonly turns: number;
  /** The race's jobs/s as the CLI's JSON reports it (the race alone, not the claim, seeding or audit), best turn. */
  readonly jobsPerSec: number;
  /** The floor's jobs/s at the same sweeper count, best turn. */
  readonly floorJobsPerSec: number;
  /** jobsPerSec ÷ floorJobsPerSec. */
  readonly overFloor: number;
  /** The server's time in script calls per job (µs): the CLI's run (its JSON's serverUsPerJob) and the floor's, in their best turns. */
  readonly serverUsPerJob: number | null;
  readonly floorServerUsPerJob: number | null;
  /** Each turn's phases, from the CLI's JSON. */
  readonly phasesMs: readonly unknown[];
  /** Every turn of each side in the order run, not only the best: how far the machine moved them. */
  readonly cliTurns: readonly TurnFigures[];
  readonly floorTurns: readonly TurnFigures[];
}

/** One turn of the CLI's race or of the floor: its race's jobs/s and the server's µs per job. */
interface TurnFigures {
  readonly jobsPerSec: number;
  readonly serverUsPerJob: number | null;
}

type SizeWithCli = SizeFigures & { readonly cliRace?: CliRaceFigures };

interface ServerFigures {
  readonly kind: string;
  readonly version: string;
  readonly sizes: SizeWithCli[];
  /** The latency part, unless --latency 0. */
  readonly latency?: LatencyFigures;
}

/** Pairs of the latency part: 3 unless --repeats says otherwise (each pair of the first case takes some 8 s). */
const LATENCY_PAIRS = 3;

async function measureServer(server: EmbeddedServer, flags: BenchFlags, log: (line: string) => void): Promise<ServerFigures> {
  const admin = await connect(parseServerUrl(server.url));
  const info = parseServerInfo(await admin.info('server'));
  admin.disconnect();
  const sizes: SizeWithCli[] = [];
  for (const jobs of flags.sizes) {
    log(`bench: ${info.kind} ${info.version}, ${jobs} jobs…`);
    const repeats = flags.repeats ?? defaultRepeats(jobs);
    const options: MeasureOptions = { jobs, batch: flags.batch, repeats, sweeperCounts: [1, 2, 8, 32], loopUpTo: 10_000 };
    const { stdout } = await run(process.execPath, ['--expose-gc', CHILD, server.url, JSON.stringify(options)], { maxBuffer: 16 << 20 });
    const size = JSON.parse(stdout) as SizeFigures;
    log(`bench: ${info.kind} ${info.version}, ${jobs} jobs, the CLI's race beside the floor…`);
    // As many turns as the size's own figures: a race of 100,000 jobs lasts some 200 ms, and on a
    // shared machine one slow turn on either side moved the ratio by a tenth with three.
    sizes.push({ ...size, cliRace: await measureCliRace(server.url, size, repeats) });
  }
  const latency = flags.latency > 0 ? await measureLatency(server.url, flags.latency, flags.repeats ?? LATENCY_PAIRS, LATENCY_CASES, log) : undefined;
  return { kind: info.kind, version: info.version, sizes, ...(latency ? { latency } : {}) };
}

/** The sweeper count a size's shipped sweep was fastest at. Pure. */
export function bestSweepers(size: Pick<SizeFigures, 'atomicSweep'>): number {
  return size.atomicSweep.ours.reduce<SweepFigures | undefined>((best, f) => (!best || f.jobsPerSec > best.jobsPerSec ? f : best), undefined)?.sweepers ?? 8;
}

interface CliRun {
  readonly jobsPerSec: number;
  readonly serverUsPerJob: number | null;
  readonly phasesMs: unknown;
}

/** The CLI's race and the floor in turn, `turns` times each, at the size's best sweeper count. */
async function measureCliRace(url: string, size: SizeFigures, turns: number): Promise<CliRaceFigures> {
  const sweepers = bestSweepers(size);
  // The CLI's default live leases, named on its command line and seeded on the floor's queue too,
  // so that both sides sweep a queue of the same size.
  const live = defaultLive(size.jobs);
  const args = [
    '--url',
    url,
    '--mode',
    'atomic',
    '--jobs',
    String(size.jobs),
    '--live',
    String(live),
    '--batch',
    String(size.batch),
    '--sweepers',
    String(sweepers),
    '--json',
  ];
  const floorOptions: FloorOptions = { jobs: size.jobs, live, batch: size.batch, sweepers };
  const cliTurns: TurnFigures[] = [];
  const floorTurns: TurnFigures[] = [];
  const phasesMs: unknown[] = [];
  const cliTurn = async (): Promise<void> => {
    const { stdout } = await run(process.execPath, [CLI, ...args], { maxBuffer: 16 << 20 });
    const raced = (JSON.parse(stdout) as { runs: CliRun[] }).runs[0];
    if (!raced) throw new Error('the CLI printed no run');
    cliTurns.push({ jobsPerSec: raced.jobsPerSec, serverUsPerJob: raced.serverUsPerJob });
    phasesMs.push(raced.phasesMs);
  };
  const floorTurn = async (): Promise<void> => {
    const floored = await run(process.execPath, [CHILD, url, JSON.stringify(floorOptions), 'floor'], { maxBuffer: 16 << 20 });
    const bound = JSON.parse(floored.stdout) as FloorFigures;
    if (bound.leftInActive !== live) throw new Error(`the floor left ${bound.leftInActive} jobs in active, not the ${live} live leases alone`);
    floorTurns.push({ jobsPerSec: bound.jobsPerSec, serverUsPerJob: bound.serverUsPerJob ?? null });
  };
  // The two sides take turns going first, so neither always meets the server just after the other.
  for (let turn = 0; turn < turns; turn++) {
    for (const side of rotated([cliTurn, floorTurn], turn)) await side();
  }
  const cli = bestTurn(cliTurns);
  const floor = bestTurn(floorTurns);
  return {
    sweepers,
    live,
    turns,
    jobsPerSec: cli.jobsPerSec,
    floorJobsPerSec: floor.jobsPerSec,
    overFloor: ratio(cli.jobsPerSec, floor.jobsPerSec),
    serverUsPerJob: cli.serverUsPerJob,
    floorServerUsPerJob: floor.serverUsPerJob,
    phasesMs,
    cliTurns,
    floorTurns,
  };
}

/** The turn with the most jobs/s: each side's figure beside the other's. */
function bestTurn(turns: readonly TurnFigures[]): TurnFigures {
  const found = turns.reduce<TurnFigures | undefined>(best, undefined);
  if (!found) throw new Error('no turn of the CLI race');
  return found;
}

/**
 * The CLI's race over the floor at the largest size each server measured, by server kind: the
 * benchmark's word on how close the tool as users run it comes to what its script can do.
 */
export function cliRaceOverFloor(servers: readonly ServerFigures[]): Record<string, number> | null {
  const entries = servers.flatMap((server) => {
    const largest = server.sizes.reduce<SizeWithCli | undefined>((best, s) => (!best || s.jobs > best.jobs ? s : best), undefined);
    return largest?.cliRace ? [[server.kind, largest.cliRace.overFloor] as const] : [];
  });
  return entries.length > 0 ? Object.fromEntries(entries) : null;
}

/**
 * Best of 15 up to 10,000 jobs, where a race lasts tens of milliseconds and one hiccup of the
 * machine would decide it (with 7, a best of 8 sweepers once came out no faster than a best of
 * one); 7 up to 100,000; 3 above, where one pass takes well over a minute.
 */
export function defaultRepeats(jobs: number): number {
  if (jobs <= 10_000) return 15;
  return jobs <= 100_000 ? 7 : 3;
}

/**
 * Headline ratios: each at the largest size measured, on the first server. `seedingBatched` is
 * the seeding against the tuned client (one ZADD per chunk), reported beside the straightforward
 * one; `atomicSweepServer` is the sweep ratio by the server's time per job instead of jobs/s;
 * `atomicSweepCeiling` is the most the sweep ratio could be with HINCRBY and HSET kept per job.
 */
export function headlineRatios(
  servers: readonly ServerFigures[],
): { seeding: number; seedingBatched: number; atomicSweep: number; atomicSweepServer: number; atomicSweepCeiling: number; audit: number } | null {
  const sizes = servers[0]?.sizes ?? [];
  const largest = sizes.reduce<SizeFigures | undefined>((best, s) => (!best || s.jobs > best.jobs ? s : best), undefined);
  if (!largest) return null;
  return {
    seeding: largest.seeding.ratio,
    seedingBatched: largest.seeding.batchedRatio,
    atomicSweep: largest.atomicSweep.ratio,
    atomicSweepServer: largest.atomicSweep.serverRatio,
    atomicSweepCeiling: largest.atomicSweep.ceilingRatio,
    audit: largest.audit.ratio,
  };
}

/**
 * The latency headline: on the first server that measured it, the first case's slow-downs (both
 * modes at 8 sweepers and 1,000 jobs) and the loop's over the atomic sweep's.
 */
export function latencyHeadline(servers: readonly ServerFigures[]): { requestedMs: number; loop: number; atomic: number; loopOverAtomic: number } | null {
  const figures = servers.find((server) => server.latency)?.latency;
  const first = figures?.cases[0];
  const of = (mode: string): number | undefined => first?.modes.find((m) => m.mode === mode)?.slowDown;
  const [loop, atomic] = [of('loop'), of('atomic')];
  if (!figures || !first || loop === undefined || atomic === undefined || first.loopOverAtomic === null) return null;
  return { requestedMs: figures.requestedMs, loop, atomic, loopOverAtomic: first.loopOverAtomic };
}

const k = (n: number): string => (n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n));
/** The lowest to the highest jobs/s of a side's turns. */
const turnRange = (turns: readonly TurnFigures[]): string =>
  rangeText(
    turns.map((t) => t.jobsPerSec),
    k,
  );
const mb = (bytes: number): string => `${Math.round(bytes / (1 << 20))} MB`;
const sweepCell = (list: readonly SweepFigures[]): string => list.map((f) => `${f.sweepers}:${k(f.jobsPerSec)}`).join(' ');

function renderBench(servers: readonly ServerFigures[], batch: number): string {
  const lines: string[] = [];
  for (const server of servers) {
    const table = new Table({
      head: [
        'jobs',
        'seed/s\nours | calib | batched',
        'sweep/s (sweepers:jobs/s)\nours',
        'sweep/s\nper-command',
        'call ms\np99 client | server',
        'server µs/job\nours | per-cmd | floor',
        'loop/s\n8 sweepers',
        'audit/s\nours | calib',
        'audit heap\nB/job',
        'server\ncmds/s',
        'ratios: seed (batched)\nsweep (server, ceiling) audit',
        'node RSS\nserver mem',
      ],
      style: { head: [], border: [] },
    });
    for (const s of server.sizes) {
      const eight = s.atomicSweep.ours.find((f) => f.sweepers === 8);
      const eightCalibration = s.atomicSweep.calibration.find((f) => f.sweepers === 8);
      table.push([
        s.jobs,
        `${k(s.seeding.jobsPerSec)} | ${k(s.seeding.calibrationJobsPerSec)} | ${k(s.seeding.batchedCalibrationJobsPerSec)}`,
        sweepCell(s.atomicSweep.ours),
        sweepCell(s.atomicSweep.calibration),
        `${eight?.callMsP99 ?? '-'} | ${eight?.serverCallMsP99 ?? '-'}`,
        `${eight?.serverUsPerJob ?? '-'} | ${eightCalibration?.serverUsPerJob ?? '-'} | ${s.atomicSweep.floor?.serverUsPerJob ?? '-'}`,
        s.loop ? k(s.loop.jobsPerSec) : '-',
        `${k(s.audit.jobsPerSec)} | ${k(s.audit.calibrationJobsPerSec)}`,
        `${s.audit.heapBytesPerJob}`,
        k(s.serverCommandsPerSec),
        `${s.seeding.ratio}× (${s.seeding.batchedRatio}×)\n${s.atomicSweep.ratio}× (${s.atomicSweep.serverRatio}×, ${s.atomicSweep.ceilingRatio}×) ${s.audit.ratio}×`,
        `${mb(s.nodePeakRssBytes)}\n${mb(s.serverUsedMemoryBytes)}`,
      ]);
    }
    if (server.sizes.length > 0)
      lines.push(`${server.kind} ${server.version} (batch ${batch}; sweep ratios, call ms and server µs/job at 8 sweepers)`, table.toString());
    for (const s of server.sizes) {
      const c = s.cliRace;
      if (!c) continue;
      const turns = `${turnRange(c.cliTurns)} against ${turnRange(c.floorTurns)}`;
      lines.push(
        `${k(s.jobs)} jobs: emq-race --mode atomic at ${c.sweepers} sweepers ${k(c.jobsPerSec)} jobs/s, the floor ${k(c.floorJobsPerSec)} (${c.overFloor} of it, best of ${c.turns} turns each: ${turns}); server µs/job ${c.serverUsPerJob ?? '-'} against ${c.floorServerUsPerJob ?? '-'}`,
      );
    }
    if (server.latency) lines.push(renderLatency(server, server.latency));
  }
  return lines.join('\n');
}

function renderLatency(server: ServerFigures, figures: LatencyFigures): string {
  const pairs = figures.cases[0]?.pairs ?? 0;
  const lines = [
    `${server.kind} ${server.version}: ${figures.requestedMs} ms of round trip through the proxy against none, ${plural(pairs, 'alternating pair')} per race`,
  ];
  for (const c of figures.cases) {
    // One narrow table per race, its flags above it: the table stays within 80 columns.
    const table = new Table({
      head: ['mode', 'jobs/s direct\n(best)', `jobs/s at ${figures.requestedMs} ms\n(best)`, 'slow-down', 'raced runs\ndirect | at ms'],
      style: { head: [], border: [] },
    });
    for (const m of c.modes) {
      table.push([
        m.mode,
        k(bestOf(m.directJobsPerSec)),
        k(bestOf(m.delayedJobsPerSec)),
        `${m.slowDown}×`,
        `${m.racedDirect}/${m.directJobsPerSec.length} | ${m.racedDelayed}/${m.delayedJobsPerSec.length}`,
      ]);
    }
    lines.push(`emq-race ${c.args.join(' ')} (round trip through the proxy: medians ${rangeText(c.measuredRttMs) || '-'} ms)`, table.toString());
    if (c.loopOverAtomic !== null) lines.push(`the loop's slow-down ÷ the atomic sweep's: ${c.loopOverAtomic}`);
  }
  return lines.join('\n');
}

export async function main(argv: readonly string[], io: Io = processIo): Promise<number> {
  let flags: BenchFlags;
  try {
    flags = parseBenchArgs(argv);
  } catch (err) {
    io.err(`bench: ${(err as Error).message}\n`);
    return 2;
  }
  const log = (line: string): void => {
    if (!flags.json) io.err(`${line}\n`);
  };
  const servers: ServerFigures[] = [];
  for (const bin of SERVER_BINARIES) {
    if (!which(bin)) {
      log(`bench: ${bin} not installed, skipped`);
      continue;
    }
    const server = await startEmbeddedServer({ bin });
    try {
      servers.push(await measureServer(server, flags, log));
    } finally {
      await server.stop();
    }
  }
  const headline = headlineRatios(servers);
  const overFloor = cliRaceOverFloor(servers);
  const ratios = headline ? { ...headline, cliRaceOverFloor: overFloor } : null;
  const latency = latencyHeadline(servers);
  const json = `${JSON.stringify({ batch: flags.batch, ratios, latency, servers })}\n`;
  const out = flags.out ?? (flags.json ? undefined : DEFAULT_OUT);
  if (out) {
    mkdirSync(dirname(resolve(out)), { recursive: true });
    writeFileSync(out, json);
  }
  if (flags.json) {
    io.out(json);
  } else {
    io.out(`${renderBench(servers, flags.batch)}\n`);
    if (ratios) {
      io.out(
        `ratios (ours ÷ calibration, largest size, first server): seeding ${ratios.seeding}× (${ratios.seedingBatched}× against the batched client), atomic sweep ${ratios.atomicSweep}× (${ratios.atomicSweepServer}× by the server's time; at most ${ratios.atomicSweepCeiling}× with HINCRBY and HSET per job), audit ${ratios.audit}×\n`,
      );
      if (overFloor)
        io.out(
          `the CLI's own race over the floor (largest size, best sweeper count): ${Object.entries(overFloor)
            .map(([kind, r]) => `${kind} ${r}`)
            .join(', ')}\n`,
        );
    }
    if (latency) {
      io.out(
        `latency (first server, both modes, 8 sweepers, 1,000 jobs): ${latency.requestedMs} ms of round trip made the loop ${latency.loop}× slower and the atomic sweep ${latency.atomic}× slower, a ratio of ${latency.loopOverAtomic}\n`,
      );
    }
    io.out(`JSON written to ${out}\n`);
  }
  return 0;
}
