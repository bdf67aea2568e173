/**
 * The failover drill's tests (test/server/failover*.test.ts): the CLI run in-process with every
 * keeper and server it spawned noted, the check that none of them is left, the run's JSON, and the
 * test's own count on a promoted replica --keep left running.
 */
import assert from 'node:assert/strict';
import { existsSync, readlinkSync } from 'node:fs';
import { createConnection } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FailoverFigures } from '../../src/shared/model.js';
import { assertMatchesSchema } from './json-schema.js';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { runCli } from './cli.js';
import { alive, askServer, childrenOf, commandLine, parentOf } from './processes.js';
import type { ServerKind } from './servers.js';

interface Spawned {
  readonly pid: number;
  readonly line: string;
}

/**
 * The CLI run in-process, with every keeper (this process's children) and server (theirs) noted
 * while it runs, looked for every 50 ms: each lives far longer (its start alone takes hundreds).
 */
export async function runWatched(args: readonly string[]): Promise<{ json: Record<string, unknown>; spawned: Spawned[] }> {
  const seen = new Map<number, string>();
  const look = (): void => {
    for (const pid of childrenOf(process.pid).flatMap((keeper) => [keeper, ...childrenOf(keeper)])) {
      const line = commandLine(pid);
      if (/server-keeper|redis-server|valkey-server/.test(line)) seen.set(pid, line);
    }
  };
  const timer = setInterval(look, 50);
  try {
    const result = await runCli(args);
    assert.equal(result.code, 0, result.stderr);
    return { json: JSON.parse(result.stdout) as Record<string, unknown>, spawned: [...seen].map(([pid, line]) => ({ pid, line })) };
  } finally {
    clearInterval(timer);
  }
}

/** Whether something accepts connections on loopback `port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The working folder of the server that answers on loopback `port`, from its own INFO (its
 * process_id) and /proc; undefined where what listens there does not answer INFO to this test (a
 * password, another protocol) or is gone.
 */
async function listenerFolder(port: number): Promise<string | undefined> {
  const pid = /^process_id:(\d+)/m.exec((await askServer(port, (server) => server.info('server'))) ?? '')?.[1];
  try {
    return pid ? readlinkSync(`/proc/${pid}/cwd`) : undefined;
  } catch {
    return undefined;
  }
}

/** Nothing of the run is left: no keeper, no server or Sentinel, no port they listened on, no data folder named on a keeper's command line. */
export async function assertNothingLeft(spawned: readonly Spawned[]): Promise<void> {
  // The session's server and, per trial, the pair's two: each with its keeper.
  assert.ok(spawned.filter((p) => /server-keeper/.test(p.line)).length >= 3, `keepers seen: ${spawned.map((p) => p.line).join('; ')}`);
  for (const { pid, line } of spawned) {
    assert.ok(!alive(pid) || commandLine(pid) !== line, `left running: ${pid} ${line}`);
    const dir = /server-keeper\.sh (\S+)/.exec(line)?.[1];
    if (dir) assert.ok(!existsSync(dir), `data folder left: ${dir}`);
    const port = Number(/ --port (\d+)/.exec(line)?.[1] ?? 0);
    if (port > 0 && (await listening(port))) {
      // A freed port is anyone's: another test's server may listen there by now. Left behind is
      // a server that still works in this keeper's folder (removed or not).
      const cwd = await listenerFolder(port);
      assert.ok(!(dir && cwd?.startsWith(dir)), `port left listening: ${port} (${line})`);
    }
  }
}

export type RunJson = {
  mode: string;
  trial: number;
  queue: string;
  node: string | null;
  jobs: number;
  stalledBefore: number;
  batch: number;
  lostIncrements: number;
  doubleRecoveries: number;
  recoveries: number;
  lostJobs: number;
  executions: number | null;
  doubleExecutions: number | null;
  sources: { doubleExecutions: string | null };
  failover: FailoverFigures;
  serverUsPerJob: number | null;
  serverCallMsP99: number | null;
};

export const runsOf = (json: Record<string, unknown>): RunJson[] => json.runs as RunJson[];

/**
 * A drill's server figures: its counters were read on the primary before the race and on the
 * promoted replica after it, two servers whose difference measures nothing; so each is null (not
 * measured), never a number, and the JSON holding them keeps to the published schema.
 */
export function assertNotMeasuredAcrossFailover(json: Record<string, unknown>, runs: readonly RunJson[]): void {
  assert.ok(runs.length > 0);
  for (const run of runs) {
    assert.equal(run.serverUsPerJob, null, `serverUsPerJob ${run.serverUsPerJob}`);
    assert.equal(run.serverCallMsP99, null, `serverCallMsP99 ${run.serverCallMsP99}`);
  }
  assertMatchesSchema(json);
}

/**
 * The drills' size: the cut after 5 calls of 10 jobs, 2 more calls, then the 30 jobs left and the
 * 20 the failover brings back, swept on the promoted replica. What the tests assert (the loss
 * against its prediction, a multiple of the batch) does not grow with the queue.
 */
export const SMALL = ['--jobs', '100', '--batch', '10', '--sweepers', '2', '--live', '0', '--json'];

/** The atomic drill on `kind`, its link cut after the 5th acknowledged call. */
export const atomicDrill = (kind: ServerKind): string[] => ['--server-bin', kind.bin, '--mode', 'atomic', '--fault', 'failover', '--failover-after', '5'];

/**
 * The test's own count on a promoted replica --keep left running, with plain commands: the stall
 * counters' gains over the seed, the entries of pending, and the workers' `runs` counters and jobs
 * marked done (0 without workers). Then the server is shut down, as its kept line tells a user to,
 * and its keeper, which outlived the tool, removes its folder and ends.
 */
export async function countOnKept(run: RunJson): Promise<{ gained: number; pending: number; distinctPending: number; runs: number; done: number }> {
  const kept = run.failover.keptServer;
  assert.ok(kept, 'the promoted replica was kept');
  const dir = readlinkSync(`/proc/${kept.pid}/cwd`);
  // The kept server's parent: its keeper.
  const keeper = parentOf(kept.pid) ?? 0;
  assert.match(commandLine(keeper), /server-keeper\.sh /, 'the kept server still has its keeper');
  const redis = await connect(parseServerUrl(kept.url));
  try {
    const prefix = `emq:{${run.queue}}:`;
    const pipeline = redis.pipeline();
    for (let id = 1; id <= run.jobs; id++) pipeline.hmget(`${prefix}job:${id}`, 'stalled', 'runs', 'state');
    const replies = ((await pipeline.exec()) ?? []).map(([, value]) => value as (string | null)[]);
    const gained = replies.reduce((sum, [stalled]) => sum + Number(stalled) - run.stalledBefore, 0);
    const runs = replies.reduce((sum, [, ran]) => sum + Number(ran ?? 0), 0);
    const done = replies.filter(([, , state]) => state === 'done').length;
    const pending = await redis.lrange(`${prefix}pending`, 0, -1);
    return { gained, pending: pending.length, distinctPending: new Set(pending).size, runs, done };
  } finally {
    await redis.call('SHUTDOWN', 'NOSAVE').catch(() => undefined);
    redis.disconnect();
    // The keeper's command line is empty once it has ended (a zombie not yet reaped reads so too).
    for (let waited = 0; (alive(kept.pid) || commandLine(keeper) !== '') && waited < 10_000; waited += 10) await sleep(10);
    assert.ok(!existsSync(dir), `the kept server's folder left after it stopped: ${dir}`);
  }
}
