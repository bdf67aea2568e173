/**
 * Redict races as Redis does, on a real redict-server: the atomic sweep is exact under contention
 * and the loop of round trips is not, each loop figure the same as a count made here from the keys
 * the run left on the server. The report names Redict by its own version (redict_version in INFO),
 * not by the Redis version it also reports; the embedded server runs it by --server-bin.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import type { Session } from '../../src/server/session.js';
import { runCli } from '../helpers/cli.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { allKeys } from '../helpers/keyspace.js';
import { REDICT_BIN, withRedict } from '../helpers/redict-server.js';
import { useSession } from '../helpers/session.js';

interface Run {
  readonly mode: string;
  readonly queue: string;
  readonly jobs: number;
  readonly stalledBefore: number;
  readonly clean: boolean;
  readonly anomalies: number;
  readonly recoveries: number;
  readonly doubleRecoveries: number;
  readonly duplicatePending: number;
  readonly lostIncrements: number;
  readonly lostJobs: number;
}

interface Report {
  readonly server: { readonly kind: string; readonly version: string };
  readonly runs: readonly Run[];
}

/** The version the binary itself prints (`Redict server v=7.3.6 ...`): the name's source apart from INFO. */
function binaryVersion(): string {
  const out = spawnSync(REDICT_BIN, ['--version'], { encoding: 'utf8' }).stdout;
  const version = /^Redict server v=(\S+)/m.exec(out)?.[1];
  assert.ok(version, `${REDICT_BIN} --version: ${out}`);
  return version;
}

/** What the kept keys of one run show: pending's entries and their duplicates, and the stall counters' shortfall. */
async function fromServer(session: Session, run: Run): Promise<{ entries: number; duplicates: number; lostIncrements: number }> {
  const prefix = `emq:{${run.queue}}:`;
  const pending = await session.admin.lrange(`${prefix}pending`, 0, -1);
  const perJob = new Map<string, number>();
  for (const id of pending) perJob.set(id, (perJob.get(id) ?? 0) + 1);
  let lostIncrements = 0;
  for (const [id, entries] of perJob) {
    const stalled = Number(await session.admin.hget(`${prefix}job:${id}`, 'stalled'));
    // Each recovery pushed the job once (a list, nothing dead-lettered): entries the counter does not show are increments lost.
    lostIncrements += Math.max(0, entries - (stalled - run.stalledBefore));
  }
  return { entries: pending.length, duplicates: pending.length - perJob.size, lostIncrements };
}

withRedict('atomic and loop', (handle) => {
  let session: Session;
  useSession(handle, (opened) => {
    session = opened;
  });

  test('INFO names the server redict, with the version the binary prints', () => {
    assert.deepEqual(session.info, { kind: 'redict', version: binaryVersion() });
  });

  test('8 sweepers over 1,000 jobs: atomic clean; the loop races, its figures those of the keys it left', async () => {
    // max-stalled out of reach: no dead letter takes entries back out of pending.
    const args = ['--url', handle.url, '--mode', 'atomic,loop', '--sweepers', '8', '--jobs', '1000', '--max-stalled', '100', '--keep', '--json'];
    const result = await runCli(args);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as Report;
    assertMatchesSchema(report, 'a race on Redict');
    assert.deepEqual(report.server, { ...report.server, kind: 'redict', version: binaryVersion() });

    const atomic = report.runs.find((run) => run.mode === 'atomic');
    const loop = report.runs.find((run) => run.mode === 'loop');
    assert.ok(atomic && loop, `runs: ${report.runs.map((run) => run.mode).join(', ')}`);
    assert.equal(atomic.recoveries, 1000);
    assert.equal(atomic.anomalies, 0);
    assert.equal(atomic.clean, true);
    assert.ok(loop.doubleRecoveries > 0, `loop doubleRecoveries ${loop.doubleRecoveries}`);
    assert.ok(loop.duplicatePending > 0, `loop duplicatePending ${loop.duplicatePending}`);
    assert.ok(loop.lostIncrements > 0, `loop lostIncrements ${loop.lostIncrements}`);
    assert.equal(loop.clean, false);
    assert.equal(loop.lostJobs, 0);

    for (const run of [atomic, loop]) {
      const kept = await fromServer(session, run);
      assert.equal(kept.entries, run.recoveries, `${run.mode}: one entry in pending per recovery`);
      assert.equal(kept.duplicates, run.duplicatePending, `${run.mode}: duplicate pending`);
      assert.equal(kept.lostIncrements, run.lostIncrements, `${run.mode}: lost increments`);
    }

    const clean = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
    assert.equal(clean.code, 0, clean.stderr);
    assert.deepEqual(await allKeys(session.admin), []);
  });

  test('the embedded server by --server-bin redict-server, named in the report', async () => {
    const result = await runCli(['--server-bin', REDICT_BIN, '--mode', 'atomic', '--jobs', '200']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.split('\n')[0], `server: redict ${binaryVersion()} (embedded, now stopped)`);
  });
});
