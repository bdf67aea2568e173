/**
 * Faults on real servers: a sweeper cut at its crash point, the script cache emptied under the
 * sweepers, and sweeper connections killed by id. The atomic script loses nothing and stays exact;
 * the loop can lose the job it had taken out of active.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Interrupts } from '../../src/shared/interrupt.js';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import type { Session } from '../../src/server/session.js';
import { runCli } from '../helpers/cli.js';
import { luaScript, type ScriptName } from '../../src/lua/registry.js';
import { fallbacksPhrase } from '../../src/report/consequences.js';
import { allKeys } from '../helpers/keyspace.js';
import { commandsBySource } from '../helpers/monitor.js';
import { assertNoAnomaly, runWith } from '../helpers/run-mode.js';
import { PUSHES_TWICE, RETURNS_FIRST_ONLY, scriptFile } from '../helpers/scripts.js';
import { forEachServer } from '../helpers/servers.js';
import { useSession } from '../helpers/session.js';

forEachServer('faults', (handle) => {
  /** The race run in-process on this server with `args` and --json: its one run, once it exited 0. */
  const jsonRun = async (args: readonly string[]): Promise<Record<string, unknown>> => {
    const result = await runCli(['--url', handle.url, ...args, '--json']);
    assert.equal(result.code, 0, result.stderr);
    return (JSON.parse(result.stdout) as { runs: Record<string, unknown>[] }).runs[0] ?? {};
  };

  let session: Session;
  let interrupts: Interrupts;
  useSession(handle, (opened, watching) => {
    session = opened;
    interrupts = watching;
  });

  test('sweeper-crash on atomic: no job lost, the audit exact, the in-flight sweep reconciled', async () => {
    const run = await runWith(session, interrupts, 'atomic', { jobs: 2000, sweepers: 4, consequences: { faults: ['sweeper-crash'] } });
    assert.equal(run.faultCounts?.crashes, 1);
    assertNoAnomaly(run);
    // The crashed call ran on the server: its moves are there, only its reply is missing.
    assert.ok(run.unacknowledgedMoves > 0 && run.unacknowledgedMoves <= 100, `unacknowledgedMoves ${run.unacknowledgedMoves}`);
    assert.equal(run.recoveries, 2000);
  });

  test("sweeper-crash under a --script that pushes twice: only the crashed call's jobs are reconciled, the script's own duplicates stay its own", async () => {
    const script = scriptFile('pushes-twice.lua', PUSHES_TWICE);
    const run = await jsonRun(['--script', script, '--fault', 'sweeper-crash', '--sweepers', '4', '--jobs', '1000']);
    // Each job moved once, pushed twice: the crashed call's 100 are the only moves no reply named.
    assert.equal(run.crashes, 1);
    assert.equal(run.recoveries, 1000);
    assert.ok(Number(run.unacknowledgedMoves ?? -1) >= 0 && Number(run.unacknowledgedMoves ?? 101) <= 100, `unacknowledgedMoves ${run.unacknowledgedMoves}`);
    assert.equal(run.doubleRecoveries, 0);
    assert.equal(run.lostIncrements, 0);
    assert.equal(run.duplicatePending, 1000);
  });

  test("sweeper-crash with workers: the crashed call's jobs that workers ran are moves the server shows, not extra increments", async () => {
    const run = await jsonRun(['--mode', 'atomic', '--fault', 'sweeper-crash', '--workers', '2', '--sweepers', '4', '--jobs', '2000']);
    assert.equal(run.crashes, 1);
    assert.equal(run.recoveries, 2000);
    assert.equal(run.extraIncrements, 0);
    assert.equal(run.clean, true);
  });

  test('sweeper-crash under --cycles: the crashed sweeper leaves one call in doubt, not one per round', async () => {
    // The script moves whole batches but returns one job of each: only the crashed call's batch may be reconciled.
    const script = scriptFile('returns-first.lua', RETURNS_FIRST_ONLY);
    const run = await jsonRun(['--script', script, '--fault', 'sweeper-crash', '--cycles', '3', '--sweepers', '4', '--jobs', '2000']);
    assert.equal(run.crashes, 1);
    assert.ok(Number(run.unacknowledgedMoves ?? 101) <= 100, `unacknowledgedMoves ${run.unacknowledgedMoves}`);
    assert.ok(Number(run.misreported ?? 0) > 0, "the unreported moves are the script's misreports");
  });

  test('sweeper-crash on a lone loop sweeper: the job it took out of active is lost', async () => {
    const run = await runWith(session, interrupts, 'loop', { jobs: 200, sweepers: 1, consequences: { faults: ['sweeper-crash'] } });
    assert.equal(run.faultCounts?.crashes, 1);
    assert.equal(run.lostJobs, 1);
    assert.equal(run.recoveries, 0);
    // Nobody else sweeps: every other lease is still there, expired.
    assert.equal(run.unreclaimed, 199);
  });

  test('sweeper-crash on the loop with others sweeping: at most the one job is lost, the rest carry on', async () => {
    const run = await runWith(session, interrupts, 'loop', { jobs: 500, sweepers: 4, consequences: { faults: ['sweeper-crash'] } });
    assert.equal(run.faultCounts?.crashes, 1);
    assert.ok(run.lostJobs <= 1, `lostJobs ${run.lostJobs}`);
    assert.equal(run.unreclaimed, 0);
  });

  test('script-flush on atomic: NOSCRIPT fallbacks to EVAL, and still zero anomalies', async () => {
    const run = await runWith(session, interrupts, 'atomic', { jobs: 3000, sweepers: 4, batch: 20, consequences: { faults: ['script-flush'] } });
    assert.ok((run.faultCounts?.scriptFlushes ?? 0) > 0);
    assert.ok(run.noscriptFallbacks > 0, `noscriptFallbacks ${run.noscriptFallbacks}`);
    assertNoAnomaly(run);
    assert.equal(run.recoveries, 3000);
  });

  /**
   * A script's source as a MONITOR line shows it once ioredis has read the line: the server writes
   * each byte of an argument as C's sdscatrepr does (a backslash, a quote and the control
   * characters escaped, any other byte outside printable ASCII as \xHH), and ioredis turns each
   * \" back into a quote.
   */
  const monitored = (source: string): string => {
    const escapes: Record<string, string> = { '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\u0007': '\\a', '\b': '\\b' };
    let text = '';
    for (const byte of Buffer.from(source, 'utf8')) {
      const char = String.fromCharCode(byte);
      text += escapes[char] ?? (byte >= 0x20 && byte <= 0x7e ? char : `\\x${byte.toString(16).padStart(2, '0')}`);
    }
    return text.replace(/\\"/g, '"');
  };

  /**
   * The EVALs the server ran, by the script each one carries: every shipped script the tests name,
   * and 'other' for the rest (the audit's, the heartbeat's). Named by its own text rather than by
   * the EVALSHA before it, since the admin connection has more than one command in flight at
   * times: the run's heartbeat may send its script beside the audit's, or beside a check.
   */
  const evalsByScript = (bySource: Map<string, string[]>): Map<string, number> => {
    const named = (['sweep-stalled', 'take-job', 'finish-job', 'release-stalled', 'observe-job'] satisfies ScriptName[]).map(
      (name) => [`EVAL ${monitored(luaScript(name).lua)} `, name] as const,
    );
    const counts = new Map<string, number>();
    for (const commands of bySource.values()) {
      for (const command of commands) {
        if (!command.startsWith('EVAL ')) continue;
        const script = named.find(([text]) => command.startsWith(text))?.[1] ?? 'other';
        counts.set(script, (counts.get(script) ?? 0) + 1);
      }
    }
    return counts;
  };

  test("script-flush with workers and the observer: each one's NOSCRIPT fallbacks are the EVALs the server ran for its scripts", async () => {
    // A sorted-set pending: the workers take with a script too, not only finish with one.
    const { result: run, bySource } = await commandsBySource(session.admin, () =>
      runWith(session, interrupts, 'atomic', {
        jobs: 3000,
        sweepers: 4,
        batch: 20,
        pending: 'zset',
        consequences: { faults: ['script-flush'], workers: 2, observe: true },
      }),
    );
    const evals = evalsByScript(bySource);
    const seen = `the server's EVALs: ${JSON.stringify([...evals])}`;
    assert.equal(run.noscriptFallbacks, evals.get('sweep-stalled') ?? 0, seen);
    assert.equal(run.workerNoscriptFallbacks, (evals.get('take-job') ?? 0) + (evals.get('finish-job') ?? 0), seen);
    assert.equal(run.observerNoscriptFallbacks, evals.get('observe-job') ?? 0, seen);
    assert.equal(run.releaserNoscriptFallbacks, undefined);
    // The flushes came every 2 ms while the workers ran thousands of finishes: some reached them.
    assert.ok((run.workerNoscriptFallbacks ?? 0) > 0, `workerNoscriptFallbacks ${run.workerNoscriptFallbacks}`);
    const total = run.noscriptFallbacks + (run.workerNoscriptFallbacks ?? 0) + (run.observerNoscriptFallbacks ?? 0);
    const grouped = (n: number): string => n.toLocaleString('en-US');
    assert.equal(
      fallbacksPhrase(run),
      // Grouped, as every count the tool prints is.
      `${grouped(total)} NOSCRIPT fallback${total === 1 ? '' : 's'} to EVAL: ${grouped(run.noscriptFallbacks)} by the sweepers, ${grouped(run.workerNoscriptFallbacks ?? 0)} by the workers, ${grouped(run.observerNoscriptFallbacks ?? 0)} by the observer`,
    );
    assertNoAnomaly(run);
  });

  test('sweeper processes (--processes): the NOSCRIPT fallbacks each child met are reported back, as many as the EVALs the server ran', async () => {
    // --processes takes no --fault: the cache is flushed from beside the run, every 2 ms, as script-flush does.
    const flusher = await connect(parseServerUrl(handle.url));
    let flushing = true;
    let flushes: Promise<void> = Promise.resolve();
    try {
      const { result: run, bySource } = await commandsBySource(session.admin, () => {
        // Only once MONITOR is in place: a command of another client's in the instant it is set
        // up reaches the monitoring connection as a reply no command asked for.
        flushes = (async () => {
          while (flushing) {
            await flusher.script('FLUSH');
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        })();
        return runWith(session, interrupts, 'atomic', { jobs: 3000, sweepers: 2, batch: 5, processes: true });
      });
      const evals = evalsByScript(bySource);
      assert.equal(run.noscriptFallbacks, evals.get('sweep-stalled') ?? 0, `the server's EVALs: ${JSON.stringify([...evals])}`);
      // 600 calls, the cache emptied every few ms meanwhile: some found it empty.
      assert.ok(run.noscriptFallbacks > 0, `noscriptFallbacks ${run.noscriptFallbacks}`);
      assertNoAnomaly(run);
    } finally {
      flushing = false;
      await flushes;
      flusher.disconnect();
    }
  });

  test("no fault: the workers', the re-leaser's and the observer's scripts are loaded before the race, so an emptied cache costs them no fallback", async () => {
    // As the sweep script is loaded before the race: their count says what a flush did, not that a first call found the cache empty.
    await session.admin.script('FLUSH');
    const withWorkers = await runWith(session, interrupts, 'atomic', { jobs: 500, pending: 'zset', consequences: { workers: 2, observe: true } });
    assert.deepEqual([withWorkers.workerNoscriptFallbacks, withWorkers.observerNoscriptFallbacks], [0, 0]);
    await session.admin.script('FLUSH');
    const withCycles = await runWith(session, interrupts, 'atomic', { jobs: 500, consequences: { cycles: 3 } });
    assert.equal(withCycles.releaserNoscriptFallbacks, 0);
  });

  test("script-flush with --cycles: the re-leaser's NOSCRIPT fallbacks are the EVALs the server ran for its script", async () => {
    const { result: run, bySource } = await commandsBySource(session.admin, () =>
      runWith(session, interrupts, 'atomic', { jobs: 2000, sweepers: 4, batch: 20, consequences: { faults: ['script-flush'], cycles: 3 } }),
    );
    const evals = evalsByScript(bySource);
    const seen = `the server's EVALs: ${JSON.stringify([...evals])}`;
    assert.equal(run.noscriptFallbacks, evals.get('sweep-stalled') ?? 0, seen);
    assert.equal(run.releaserNoscriptFallbacks, evals.get('release-stalled') ?? 0, seen);
    assert.equal(run.workerNoscriptFallbacks, undefined);
    assert.equal(run.observerNoscriptFallbacks, undefined);
    assert.ok((run.releaserNoscriptFallbacks ?? 0) > 0, `releaserNoscriptFallbacks ${run.releaserNoscriptFallbacks}`);
  });

  test('sweeper-crash beside client-kill: the crashed call reaches the server, its batch moved, and the kills come after it', async () => {
    // One sweeper: the crashed call is the first, and the only one that could move a job.
    const alone = await runWith(session, interrupts, 'atomic', { jobs: 300, sweepers: 1, live: 0, consequences: { faults: ['sweeper-crash', 'client-kill'] } });
    assert.equal(alone.faultCounts?.crashes, 1);
    assert.equal(alone.unacknowledgedMoves, 100, "the crashed call's batch, moved by the server");
    assert.equal(alone.unreclaimed, 200);
    const many = await runWith(session, interrupts, 'atomic', {
      jobs: 3000,
      sweepers: 4,
      batch: 20,
      consequences: { faults: ['sweeper-crash', 'client-kill'] },
    });
    assert.equal(many.faultCounts?.crashes, 1);
    // The crashed call's batch, and those of calls whose replies a kill lost after it.
    const lostReplies = many.faultCounts?.lostReplies ?? 0;
    assert.ok(
      many.unacknowledgedMoves >= 20 && many.unacknowledgedMoves <= 20 * (1 + lostReplies),
      `${many.unacknowledgedMoves} unacknowledged, ${lostReplies} replies lost`,
    );
    assert.ok((many.faultCounts?.clientKills ?? 0) > 0, 'kills landed after the crash');
    assertNoAnomaly(many);
    assert.equal(many.recoveries, 3000);
  });

  test('client-kill: both modes finish by themselves; atomic stays exact, the loop sees its connections killed', async () => {
    const atomic = await runWith(session, interrupts, 'atomic', { jobs: 3000, sweepers: 4, batch: 20, consequences: { faults: ['client-kill'] } });
    assert.ok((atomic.faultCounts?.clientKills ?? 0) > 0, 'no kill landed on atomic');
    assertNoAnomaly(atomic);
    assert.equal(atomic.recoveries, 3000);
    assert.equal(atomic.cutShort, false);
    const loop = await runWith(session, interrupts, 'loop', { jobs: 600, sweepers: 2, consequences: { faults: ['client-kill'] } });
    assert.ok((loop.faultCounts?.clientKills ?? 0) > 0, 'no kill landed');
    assert.ok((loop.faultCounts?.reconnects ?? 0) > 0, 'no reconnect');
    assert.equal(loop.unreclaimed, 0);
    assert.equal(loop.cutShort, false);
  });

  test('script-flush on a --url server needs --allow-server-wide (exit 2, one line, nothing written)', async () => {
    const refused = await runCli(['--url', handle.url, '--mode', 'atomic', '--fault', 'script-flush']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^emq-race: --fault script-flush .*--allow-server-wide\n$/);
    assert.deepEqual(await allKeys(session.admin), []);
    const allowed = await runCli(['--url', handle.url, '--mode', 'both', '--jobs', '300', '--fault', 'script-flush', '--allow-server-wide', '--json']);
    assert.equal(allowed.code, 0, allowed.stderr);
    const report = JSON.parse(allowed.stdout) as { runs: { mode: string; faults: string[]; faultNotes: string[]; noscriptFallbacks: number }[] };
    const loop = report.runs.find((r) => r.mode === 'loop');
    assert.deepEqual(loop?.faults, []);
    assert.match(loop?.faultNotes[0] ?? '', /script-flush does not apply to loop/);
  });

  test('nothing of a fault run is left on the server afterwards', async () => {
    assert.deepEqual(await allKeys(session.admin), []);
  });
});
