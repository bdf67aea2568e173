/**
 * BullMQ's own moveStalledJobsToWait, read from the installed package when the test runs, raced
 * beside a copy of it with its removal guard taken out (the check on LREM's reply), both through
 * the tool's script caller and audited by the tool's BullMQ audit. The script runs whole on the
 * server, so its callers cannot interleave: the guard matters only for a job that left `active` by
 * another route between the check that marked it and the one that moves it. The seed adds that
 * route with BullMQ's own API: the application removes some marked jobs whose locks lapsed
 * (Queue#remove, which refuses only a locked job and leaves the id in `stalled`). BullMQ's script
 * leaves them removed; the copy puts each back into `wait` as a hash holding nothing but `stc`,
 * a job with no name and no data for a worker to take, and the audit counts each as misplaced.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Redis } from 'ioredis';
import { Queue } from 'bullmq';
import { auditBullmq } from '../../src/libraries/bullmq/audit.js';
import { bullmqKeys, type BullmqKeys } from '../../src/libraries/bullmq/keys.js';
import { loadBullmq } from '../../src/libraries/bullmq/module.js';
import { maxStalledCount } from '../../src/libraries/bullmq/run.js';
import { scriptCaller } from '../helpers/bullmq-script-caller.js';
import { BullmqClients, seedStalledJobs } from '../../src/libraries/bullmq/seed.js';
import { readBullmqSnapshot } from '../../src/libraries/bullmq/snapshot.js';
import { raceCallers, type Caller } from '../../src/libraries/race.js';
import { findLibrary } from '../../src/libraries/resolve.js';
import type { AuditCounts } from '../../src/shared/model.js';
import { connect, libraryClientOptions } from '../../src/server/connection.js';
import type { Session } from '../../src/server/session.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';

/** The project's folder, whose node_modules holds the bullmq the tests race. */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));
const JOBS = 200;
const CALLERS = 8;
const MAX_STALLED = 3;
/** The jobs the application removes after the check marked them and their locks lapsed. */
const REMOVED = [3, 50, 51, 120, 199];
/** The guard, as BullMQ 6.7's script words it. */
const GUARD = 'if (removed > 0) then';

/** BullMQ's moveStalledJobsToWait, its includes inlined, as the installed package ships it. */
async function bullmqScript(): Promise<string> {
  const require = createRequire(join(PROJECT, 'noop.js'));
  const root = dirname(require.resolve('bullmq/package.json'));
  const file = join(root, 'dist', 'esm', 'scripts', 'moveStalledJobsToWait-9.js');
  assert.ok(readFileSync(file, 'utf8').length > 0);
  const loaded = (await import(pathToFileURL(file).href)) as { moveStalledJobsToWait: { content: string } };
  return loaded.moveStalledJobsToWait.content;
}

/** The same script with the LREM reply check made always true: every marked id whose lock is gone is counted and pushed. */
function withoutGuard(script: string): string {
  assert.equal(script.split(GUARD).length, 2, 'the installed script has the guard once');
  return script.replace(GUARD, 'if true then');
}

interface Raced {
  readonly counts: AuditCounts;
  readonly wait: string[];
  readonly hashes: Map<number, Record<string, string>>;
}

/** Seeds marked, lapsed jobs through BullMQ, removes REMOVED through BullMQ, races CALLERS callers of `lua`, audits, cleans up. */
async function raceScript(session: Session, lua: string, removed: readonly number[] = REMOVED): Promise<Raced> {
  const bullmq = await loadBullmq(findLibrary('bullmq', PROJECT));
  const queue = `guard-${Math.random().toString(16).slice(2, 10)}`;
  const keys = bullmqKeys(queue);
  const connection = libraryClientOptions(session.target);
  const signal = AbortSignal.timeout(120_000);
  const clients = new BullmqClients();
  const redises: Redis[] = [];
  try {
    const runId = queue;
    await seedStalledJobs(session.admin, { bullmq, connection, keys, jobs: JOBS, runId, maxStalledCount: maxStalledCount(MAX_STALLED), clients, signal });
    const app = new Queue(keys.name, { connection, prefix: keys.prefix });
    try {
      for (const id of removed) assert.equal(await app.remove(String(id)), 1, `job ${id}, its lock lapsed, is removed`);
    } finally {
      await app.close();
    }
    for (const id of removed) assert.equal(await session.admin.sismember(keys.stalled, String(id)), 1, 'removal leaves the id marked in stalled');
    const callers: Caller[] = [];
    for (let i = 0; i < CALLERS; i++) {
      const redis = await connect(session.target);
      redises.push(redis);
      callers.push(await scriptCaller(redis, keys, lua, { maxStalledCount: maxStalledCount(MAX_STALLED), maxCheckTime: 30_000 }));
    }
    const raced = await raceCallers(callers, JOBS, signal, 100);
    const snapshot = await readBullmqSnapshot(session.admin, keys, JOBS, signal);
    const hashes = new Map<number, Record<string, string>>();
    for (const id of REMOVED) hashes.set(id, await session.admin.hgetall(keys.job(id)));
    return { counts: auditBullmq(snapshot, raced.moves, MAX_STALLED), wait: await session.admin.lrange(keys.wait, 0, -1), hashes };
  } finally {
    await clients.closeAll();
    for (const redis of redises) redis.disconnect();
    await removeQueue(session.admin, keys);
  }
}

async function removeQueue(admin: Redis, keys: BullmqKeys): Promise<void> {
  const pattern = `${keys.base.slice(0, -'bullmq:'.length)}*`;
  let cursor = '0';
  do {
    const [next, found] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    if (found.length > 0) await admin.unlink(...found);
    cursor = next;
  } while (cursor !== '0');
}

forEachServer("BullMQ's script without its removal guard", (handle) => {
  let session: Session;
  useSession(handle, (s) => {
    session = s;
  });

  test("BullMQ's own script: the removed jobs stay removed, the others recovered once, clean", async () => {
    const { counts, wait, hashes } = await raceScript(session, await bullmqScript());
    assert.equal(counts.recoveries, JOBS - REMOVED.length);
    assert.equal(wait.length, JOBS - REMOVED.length);
    for (const id of REMOVED) {
      assert.ok(!wait.includes(String(id)), `job ${id} is not back in wait`);
      assert.deepEqual(hashes.get(id), {}, `job ${id}'s hash stays gone`);
    }
    for (const name of ['duplicatePending', 'lostIncrements', 'extraIncrements', 'overcountedStalls', 'lostJobs', 'misplaced', 'unreclaimed'] as const) {
      assert.equal(counts[name], 0, `${name}: ${JSON.stringify(counts)}`);
    }
  });

  test('the copy without the guard, on jobs that only stalled: as clean as the original (the script is one step)', async () => {
    const { counts, wait } = await raceScript(session, withoutGuard(await bullmqScript()), []);
    assert.equal(counts.recoveries, JOBS);
    assert.equal(wait.length, JOBS);
    for (const name of ['duplicatePending', 'lostIncrements', 'extraIncrements', 'overcountedStalls', 'lostJobs', 'misplaced', 'unreclaimed'] as const) {
      assert.equal(counts[name], 0, `${name}: ${JSON.stringify(counts)}`);
    }
  });

  test('the copy without the guard puts every removed job back into wait, a hash of nothing but stc: the audit counts each as misplaced', async () => {
    const { counts, wait, hashes } = await raceScript(session, withoutGuard(await bullmqScript()));
    // An independent count: the ids in wait whose hash BullMQ did not write (no timestamp).
    const ghosts = REMOVED.filter((id) => wait.includes(String(id)) && hashes.get(id)?.timestamp === undefined);
    assert.deepEqual(ghosts, REMOVED);
    for (const id of REMOVED) assert.deepEqual(hashes.get(id), { stc: '1' }, `job ${id} made again by HINCRBY alone`);
    assert.equal(counts.misplaced, ghosts.length);
    assert.equal(counts.recoveries, JOBS);
    assert.equal(counts.lostJobs, 0);
    assert.equal(counts.duplicatePending, 0, 'the script is one step: no two callers pushed the same job');
  });
});
