/**
 * --latency end to end on real servers: the race's connections go through the delaying proxy (a
 * script call as the client timed it can be no faster than the round trip added), the run reports
 * the latency asked for and measured, the atomic sweep stays clean and the loop races. Timing is
 * checked one way only, as the proxy guarantees it: never faster than asked.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { connect, parseServerUrl, tlsOptions } from '../../src/server/connection.js';
import { proxyTarget, throughProxy } from '../../src/server/latency-proxy.js';
import type { ReportJson, RunJson } from '../../src/report/json.js';
import { measureLatency } from '../../src/bench/latency.js';
import { runCli, unwrapped } from '../helpers/cli.js';
import { allKeys } from '../helpers/keyspace.js';
import { forOneServerKind } from '../helpers/servers.js';
import { pageReport } from '../helpers/page-report.js';

const clean = (run: RunJson): boolean => run.doubleRecoveries === 0 && run.duplicatePending === 0 && run.lostIncrements === 0 && run.unreclaimed === 0;

test('the proxied target keeps credentials and database, and TLS checks the server by its own name', () => {
  const plain = throughProxy(parseServerUrl('redis://user:s3cret@10.1.2.3:6380/4'), { host: '127.0.0.1', port: 40001 });
  assert.equal(plain.url, 'redis://user:s3cret@127.0.0.1:40001/4');
  assert.equal(plain.display, 'redis://user:***@10.1.2.3:6380/4');
  assert.equal(plain.tls, undefined);
  const secure = throughProxy(
    { url: 'rediss://cache.example.com:6380', display: 'rediss://cache.example.com:6380', tls: { rejectUnauthorized: true } },
    { host: '127.0.0.1', port: 40002 },
  );
  assert.equal(secure.url, 'rediss://127.0.0.1:40002');
  assert.equal(secure.tls?.serverName, 'cache.example.com');
  const options = tlsOptions(secure) as { servername?: string; checkServerIdentity?: unknown };
  assert.equal(options.servername, 'cache.example.com');
  assert.equal(typeof options.checkServerIdentity, 'function');
  // An IP address is checked against the certificate but sent as no SNI name (SNI carries none).
  const byIp = tlsOptions(throughProxy({ url: 'rediss://[::1]:6380', display: 'rediss://[::1]:6380' }, { host: '127.0.0.1', port: 40003 })) as {
    servername?: string;
  };
  assert.equal(byIp.servername, undefined);
  assert.deepEqual(proxyTarget('redis://[::1]:7000'), { targetHost: '::1', targetPort: 7000 });
  assert.deepEqual(proxyTarget('redis://example.com'), { targetHost: 'example.com', targetPort: 6379 });
});

// The subject is the tool's own proxy between its connections and the server: what it checks comes
// out the same on either kind (modes.test.ts holds the verdicts to both), so one kind runs it.
forOneServerKind(import.meta.url, '--latency', (handle) => {
  test('--mode both --sweepers 8 --latency 2 --json: latency reported, every call through the proxy, atomic clean, loop races', async () => {
    // 100 jobs: eight sweepers, each round trip 2 ms longer, race the loop on every run; more jobs
    // only add round trips through the proxy.
    const result = await runCli(['--url', handle.url, '--mode', 'both', '--sweepers', '8', '--jobs', '100', '--latency', '2', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as ReportJson;
    const latency = report.latency;
    assert.ok(latency, 'a latency object');
    assert.equal(latency.requestedMs, 2);
    assert.equal(latency.jitterMs, 0);
    assert.equal(latency.pings, 200);
    assert.ok(latency.measuredRttMs.median >= 2, `median ${latency.measuredRttMs.median}`);
    assert.ok(latency.measuredRttMs.p99 >= latency.measuredRttMs.median);
    // Measured, not compared: on a busy machine a direct round trip can take longer than the proxy's floor.
    assert.ok(latency.directRttMs.median > 0 && latency.directRttMs.p99 >= latency.directRttMs.median, JSON.stringify(latency));
    assert.ok(latency.heldBackMs >= 0 && latency.heldBackMs <= 2, `held back ${latency.heldBackMs}`);
    const [atomic, loop] = report.runs;
    assert.equal(atomic?.mode, 'atomic');
    assert.ok(atomic && clean(atomic), JSON.stringify(atomic));
    assert.equal(atomic.recoveries, 100);
    // Each script call crossed the proxy both ways: none can have been quicker than the 2 ms added.
    assert.ok((atomic.callMsP50 ?? 0) >= 2, `atomic call p50 ${atomic.callMsP50}`);
    assert.equal(loop?.mode, 'loop');
    assert.ok(loop && loop.duplicatePending > 0 && (loop.lostIncrements ?? 0) > 0, JSON.stringify(loop));
    const admin = await connect(parseServerUrl(handle.url));
    assert.deepEqual(await allKeys(admin), []);
    await admin.quit();
  });

  test('atomic with 64 sweepers and --latency 5 is clean in every trial', async () => {
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'atomic',
      '--sweepers',
      '64',
      '--jobs',
      '300',
      '--latency',
      '5',
      '--trials',
      '2',
      '--expect',
      'clean',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as ReportJson;
    assert.equal(report.latency?.requestedMs, 5);
    assert.ok((report.latency?.measuredRttMs.median ?? 0) >= 5);
    assert.equal(report.runs.length, 2);
    for (const run of report.runs) {
      assert.equal(run.sweepers, 64);
      assert.ok(clean(run), JSON.stringify(run));
      assert.equal(run.recoveries, 300);
      assert.ok((run.callMsP50 ?? 0) >= 5, `call p50 ${run.callMsP50}`);
    }
  });

  test('--processes: every sweeper process reaches the server through the proxy', async () => {
    // A round trip of 50 ms: a race in which each process sends at least one script call cannot
    // take less, where the same race direct takes a few milliseconds. One sweeper process: every
    // child is sent the same setup (the proxy's address among it), so more would only add Node
    // start-ups.
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'atomic',
      '--processes',
      '--sweepers',
      '1',
      '--jobs',
      '200',
      '--latency',
      '50',
      '--server-stats',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as ReportJson;
    assert.equal(report.latency?.pings, 20);
    const [run] = report.runs;
    assert.ok(run?.processes && clean(run), JSON.stringify(run));
    assert.ok(run.wallMs >= 50, `wall ${run.wallMs} ms`);
    // The server's own figures are read from the server, whoever sent the calls: the tool times no
    // call of a sweeper process, but the server counted each.
    const server = run as unknown as { callMsP50: number | null; serverCallMsP99: number | null; serverUsPerJob: number | null };
    assert.equal(server.callMsP50, null);
    assert.ok((server.serverCallMsP99 ?? 0) > 0 && (server.serverUsPerJob ?? 0) > 0, JSON.stringify(run));
  });

  test('workers, the observer and client-kill run through the proxy too: a killed sweeper reconnects through it', async () => {
    // 100 jobs: at 1 ms a round trip the race lasts long enough for a kill to land and for the
    // loop's duplicates to be run twice; more jobs only add round trips through the proxy.
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'both',
      '--sweepers',
      '4',
      '--jobs',
      '100',
      '--workers',
      '2',
      '--observe',
      '--fault',
      'client-kill',
      '--latency',
      '1',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const [atomic, loop] = (JSON.parse(result.stdout) as ReportJson).runs;
    assert.ok(atomic && clean(atomic) && atomic.doubleExecutions === 0 && atomic.windowInBoth === 0, JSON.stringify(atomic));
    assert.equal(atomic.executions, 100);
    assert.ok(loop && (loop.doubleExecutions ?? 0) > 0 && (loop.samples ?? 0) > 0, JSON.stringify(loop));
    assert.ok((loop.clientKills ?? 0) > 0 && (loop.reconnects ?? 0) > 0, `kills ${loop.clientKills}, reconnects ${loop.reconnects}`);
  });

  test('--cycles re-leases through the proxy: atomic clean over every cycle', async () => {
    // 100 jobs: every recovered job is leased again whatever the timing, so more only add round trips.
    const result = await runCli(['--url', handle.url, '--mode', 'atomic', '--sweepers', '4', '--jobs', '100', '--cycles', '3', '--latency', '1', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const [run] = (JSON.parse(result.stdout) as ReportJson).runs;
    assert.ok(run && run.doubleRecoveries === 0 && run.deadLetterEscapes === 0 && run.unreclaimed === 0, JSON.stringify(run));
    assert.ok(run.recoveries > 100, `recoveries over the cycles: ${run.recoveries}`);
  });

  test('the table says the latency in its header; the HTML page shows it and carries it in its data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-latency-'));
    try {
      const page = join(dir, 'race.html');
      const result = await runCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '60', '--latency', '1.5', '--latency-jitter', '1', '--html', page]);
      assert.equal(result.code, 0, result.stderr);
      // The header wraps at the terminal's width: its continuation lines are indented by two.
      const joined = unwrapped(result.stdout);
      const header =
        /^server: .*\nlatency: 1\.5 ms \+ up to 1 ms jitter of round trip added to the race's connections; measured median (\d+\.\d\d) ms, p99 (\d+\.\d\d) ms \(\d+ PINGs through the proxy; straight to the server (\d+\.\d\d) ms; seeding and audit go direct\)\n/.exec(
          joined,
        );
      assert.ok(header, result.stdout);
      assert.ok(Number(header[1]) >= 1.5);
      assert.ok(Number(header[3]) < Number(header[1]), 'straight to the server is quicker than through the proxy');
      const html = readFileSync(page, 'utf8');
      assert.match(html, /<dt>latency<\/dt><dd>1\.5 ms \+ up to 1 ms jitter of round trip added/);
      assert.match(html, /<span class="arg">--latency 1\.5<\/span> <span class="arg">--latency-jitter 1<\/span>/);
      const data = pageReport(html) as ReportJson;
      assert.equal(data.latency?.requestedMs, 1.5);
      assert.equal(data.latency?.jitterMs, 1);
      assert.equal(data.latency?.measuredRttMs.median, Number(header[1]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("the benchmark's latency part: the tool run direct and through the proxy in alternating pairs, each mode's slow-down from its own runs", async () => {
    const lines: string[] = [];
    const figures = await measureLatency(handle.url, 1, 2, [['--mode', 'both', '--sweepers', '8', '--jobs', '100']], (line) => lines.push(line));
    assert.equal(figures.requestedMs, 1);
    assert.deepEqual(lines, ['bench: latency 1 ms, --mode both --sweepers 8 --jobs 100…']);
    const [only] = figures.cases;
    assert.ok(only);
    assert.equal(only.pairs, 2);
    assert.equal(only.measuredRttMs.length, 2, 'one measured round trip per run through the proxy');
    // Through the proxy, nowhere near loopback's tenth of a millisecond (the proxy holds back its own
    // measured cost, so on a busy machine a median can come out a few hundredths under the 1 ms).
    for (const rtt of only.measuredRttMs) assert.ok(rtt >= 0.75, `a round trip through the proxy takes about what was asked: ${rtt}`);
    assert.deepEqual(
      only.modes.map((m) => m.mode),
      ['atomic', 'loop'],
    );
    for (const m of only.modes) {
      assert.equal(m.directJobsPerSec.length, 2);
      assert.equal(m.delayedJobsPerSec.length, 2);
      assert.equal(m.slowDown, Math.round((Math.max(...m.directJobsPerSec) / Math.max(...m.delayedJobsPerSec)) * 100) / 100);
    }
    const [atomic, loop] = only.modes;
    assert.equal(atomic?.racedDirect, 0);
    assert.equal(atomic?.racedDelayed, 0);
    assert.equal(loop?.racedDirect, 2, 'eight loop sweepers race on every run');
    assert.equal(loop?.racedDelayed, 2);
    assert.equal(only.loopOverAtomic, Math.round(((loop?.slowDown ?? 0) / (atomic?.slowDown ?? 1)) * 100) / 100);
    const admin = await connect(parseServerUrl(handle.url));
    assert.deepEqual(await allKeys(admin), [], 'every run cleaned up');
    await admin.quit();
  });

  test('without --latency the JSON has no latency object', async () => {
    const result = await runCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '50', '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal('latency' in (JSON.parse(result.stdout) as object), false);
  });
});
