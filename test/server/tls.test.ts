/**
 * rediss:// against real servers started with TLS on a loopback port (throwaway certificates from
 * openssl), with and without client-certificate auth, for the race, `explain` and `clean`, through the latency proxy, and unix://
 * against the same servers' socket.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { startLatencyProxy, throughProxy } from '../../src/server/latency-proxy.js';
import { freePort, which } from '../../src/server/embedded-server.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine, within } from '../helpers/cli-process.js';
import { makeCerts, type TestCerts } from '../helpers/certs.js';
import { allKeys } from '../helpers/keyspace.js';
import { startProxy } from '../helpers/proxy.js';
import { SERVER_KINDS } from '../helpers/servers.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const opensslMissing = which('openssl') === undefined;

// One set of certificates for the whole file: both kinds' servers present the same ones.
let certs: TestCerts;
before(() => {
  if (!opensslMissing) certs = makeCerts();
});
after(() => {
  if (certs) rmSync(certs.dir, { recursive: true, force: true });
});

for (const kind of SERVER_KINDS) {
  const skip = which(kind.bin) === undefined ? `${kind.bin} is not installed` : opensslMissing ? 'openssl is not installed' : false;
  describe(`TLS and unix sockets [${kind.kind}]`, { skip }, () => {
    let server: TestServer;
    let plain: Redis;
    let tlsUrl: string;
    let socketUrl: string;
    before(async () => {
      const tlsPort = await freePort();
      const socket = join(certs.dir, `${kind.kind}.sock`);
      // Kept by `sh` (test-server.ts): the tool's embedded server is not what this file tests.
      server = await startTestServer(kind.bin, [
        '--tls-port',
        String(tlsPort),
        '--tls-cert-file',
        certs.serverCert,
        '--tls-key-file',
        certs.serverKey,
        '--tls-ca-cert-file',
        certs.ca,
        '--tls-auth-clients',
        'yes',
        '--unixsocket',
        socket,
        '--unixsocketperm',
        '700',
      ]);
      tlsUrl = `rediss://127.0.0.1:${tlsPort}`;
      socketUrl = `unix://${socket}`;
      plain = await connect(parseServerUrl(server.url));
    });
    after(async () => {
      plain?.disconnect();
      await server?.stop();
    });

    const clientCert = (): string[] => ['--tls-cert', certs.clientCert, '--tls-key', certs.clientKey];

    test('client certificate required: CA + certificate + key run clean and leave nothing', async () => {
      // What is checked is the connection and the clean-up, not the race: few jobs are enough.
      const result = await runCli(['--url', tlsUrl, '--tls-ca', certs.ca, ...clientCert(), '--jobs', '100', '--sweepers', '3', '--json']);
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as { server: { url: string }; runs: { mode: string; recoveries: number }[] };
      assert.equal(report.server.url, `${tlsUrl}`);
      assert.deepEqual(
        report.runs.map((r) => r.mode),
        ['atomic', 'loop'],
      );
      assert.deepEqual(await allKeys(plain), []);
    });

    test('--processes over TLS: every sweeper process connects with the same CA and certificate', async () => {
      // One sweeper process a mode, two in all: every child is sent the same setup (URL, CA,
      // certificate and key), so a second one a mode would only add a Node start-up.
      const result = await runCli(['--url', tlsUrl, '--tls-ca', certs.ca, ...clientCert(), '--processes', '--jobs', '100', '--sweepers', '1', '--json']);
      assert.equal(result.code, 0, result.stderr);
      const report = JSON.parse(result.stdout) as { runs: { mode: string; processes: boolean; recoveries: number; doubleRecoveries: number }[] };
      assert.deepEqual(
        report.runs.map((r) => [r.mode, r.processes]),
        [
          ['atomic', true],
          ['loop', true],
        ],
      );
      const atomic = report.runs[0];
      assert.equal(atomic?.recoveries, 100);
      assert.equal(atomic?.doubleRecoveries, 0);
      assert.deepEqual(await allKeys(plain), []);
    });

    test('without a client certificate: one line saying so, exit 3', async () => {
      const result = await within(15_000, 'the run', runCli(['--url', tlsUrl, '--tls-ca', certs.ca, '--jobs', '10']));
      assert.equal(result.code, 3, result.stderr);
      const line = oneErrorLine(result.stderr);
      assert.ok(line, result.stderr);
      assert.match(line, /client certificate|TLS handshake/);
    });

    test('a server that closes the connection where a client certificate was wanted: one line naming the certificate, exit 3', async () => {
      // The relay lets each connection's first chunk (the ClientHello) through and cuts at the
      // client's next: the server's alert never arrives, as when it closes on a missing certificate.
      const chunks = new Map<number, number>();
      const relay = await startProxy(Number(new URL(tlsUrl).port), (_chunk, connection) => {
        chunks.set(connection, (chunks.get(connection) ?? 0) + 1);
        return (chunks.get(connection) ?? 0) > 1 ? 'cut' : 'pass';
      });
      try {
        const url = relay.url.replace('redis:', 'rediss:');
        const bare = await within(15_000, 'the run', runCli(['--url', url, '--tls-ca', certs.ca, '--jobs', '10']));
        assert.equal(bare.code, 3, bare.stderr);
        assert.match(
          oneErrorLine(bare.stderr) ?? '',
          /closed the connection while connecting over TLS: if it requires a client certificate, pass --tls-cert FILE and --tls-key FILE/,
        );
        assert.doesNotMatch(bare.stderr, /^emq-race: lost the connection/m);
        const withCert = await within(15_000, 'the run', runCli(['--url', url, '--tls-ca', certs.ca, ...clientCert(), '--jobs', '10']));
        assert.equal(withCert.code, 3, withCert.stderr);
        assert.match(oneErrorLine(withCert.stderr) ?? '', /does it accept this client certificate/);
      } finally {
        await relay.close();
      }
    });

    test('a --tls-ca file that is no PEM: exit 2 naming the file, with the conversion for a DER certificate', async () => {
      const der = join(certs.dir, 'ca.der');
      execFileSync('openssl', ['x509', '-in', certs.ca, '-outform', 'der', '-out', der]);
      const junk = join(certs.dir, 'ca.txt');
      writeFileSync(junk, 'not a certificate\n');
      const fromDer = await runCli(['--url', tlsUrl, '--tls-ca', der, ...clientCert(), '--jobs', '10']);
      assert.equal(fromDer.code, 2, fromDer.stderr);
      assert.match(oneErrorLine(fromDer.stderr) ?? '', /^emq-race: --tls-ca: ".*ca\.der" holds no PEM certificate .*DER .*openssl x509 -inform der/);
      const fromJunk = await runCli(['--url', tlsUrl, '--tls-ca', junk, ...clientCert(), '--jobs', '10']);
      assert.equal(fromJunk.code, 2, fromJunk.stderr);
      assert.match(oneErrorLine(fromJunk.stderr) ?? '', /^emq-race: --tls-ca: ".*ca\.txt" holds no PEM certificate \(no "-----BEGIN CERTIFICATE-----" line\)$/);
    });

    test('a server certificate from an unknown CA is refused unless --tls-insecure', async () => {
      const refused = await runCli(['--url', tlsUrl, ...clientCert(), '--jobs', '10']);
      assert.equal(refused.code, 3, refused.stderr);
      assert.match(oneErrorLine(refused.stderr) ?? '', /not signed by a trusted CA.*--tls-ca/);
      // A CA given, but not the one that signed it: the line does not say to give one.
      const other = makeCerts();
      try {
        const wrongCa = await runCli(['--url', tlsUrl, '--tls-ca', other.ca, ...clientCert(), '--jobs', '10']);
        assert.equal(wrongCa.code, 3, wrongCa.stderr);
        assert.match(
          oneErrorLine(wrongCa.stderr) ?? '',
          /not signed by a trusted CA \([A-Z_]+\): --tls-ca FILE must name the CA that signed it \(or, knowingly, --tls-insecure\)$/,
        );
      } finally {
        rmSync(other.dir, { recursive: true, force: true });
      }
      const insecure = await runCli(['--url', tlsUrl, ...clientCert(), '--tls-insecure', '--jobs', '100', '--mode', 'atomic', '--expect', 'clean']);
      assert.equal(insecure.code, 0, insecure.stderr);
    });

    test('plain redis:// to the TLS port: one line, exit 3, no hang', async () => {
      const result = await within(15_000, 'the run', runCli(['--url', tlsUrl.replace('rediss:', 'redis:'), '--jobs', '10']));
      assert.equal(result.code, 3, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? '', /use a rediss:\/\/ URL/);
    });

    test('clean works over TLS', async () => {
      const kept = await runCli([
        '--url',
        tlsUrl,
        '--tls-ca',
        certs.ca,
        ...clientCert(),
        '--jobs',
        '50',
        '--live',
        '0',
        '--keep',
        '--queue',
        'race-tls',
        '--mode',
        'atomic',
      ]);
      assert.equal(kept.code, 0, kept.stderr);
      const clean = await runCli(['clean', '--url', tlsUrl, '--tls-ca', certs.ca, ...clientCert(), '--queue', 'race-tls']);
      assert.equal(clean.code, 0, clean.stderr);
      assert.match(clean.stdout, /removed queue race-tls: 52 keys/);
      assert.deepEqual(await allKeys(plain), []);
    });

    test('explain over TLS: the same flags as the race; without the CA refused, with a plain URL a usage error', async () => {
      const replayed = await runCli(['explain', '--url', tlsUrl, '--tls-ca', certs.ca, ...clientCert(), '--json']);
      assert.equal(replayed.code, 0, replayed.stderr);
      const report = JSON.parse(replayed.stdout) as { server: { url: string }; replays: { mode: string }[] };
      assert.equal(report.server.url, tlsUrl);
      assert.deepEqual(
        report.replays.map((r) => r.mode),
        ['loop', 'atomic'],
      );
      assert.deepEqual(await allKeys(plain), []);
      const refused = await runCli(['explain', '--url', tlsUrl, ...clientCert()]);
      assert.equal(refused.code, 3, refused.stderr);
      assert.match(oneErrorLine(refused.stderr) ?? '', /not signed by a trusted CA.*--tls-ca/);
      const misplaced = await runCli(['explain', '--url', server.url, '--tls-ca', certs.ca]);
      assert.equal(misplaced.code, 2, misplaced.stderr);
      assert.match(oneErrorLine(misplaced.stderr) ?? '', /--tls-ca: only applies to a rediss:\/\/ --url/);
      assert.deepEqual(await allKeys(plain), []);
    });

    test('explore over TLS: the same flags as explain', async () => {
      const explored = await runCli(['explore', '--url', tlsUrl, '--tls-ca', certs.ca, ...clientCert(), '--mode', 'atomic', '--json']);
      assert.equal(explored.code, 0, explored.stderr);
      const report = JSON.parse(explored.stdout) as { server: { url: string }; modes: { mode: string; outcomes: Record<string, number> }[] };
      assert.equal(report.server.url, tlsUrl);
      assert.deepEqual(
        report.modes.map((m) => [m.mode, m.outcomes]),
        [['atomic', { clean: 2 }]],
      );
      assert.deepEqual(await allKeys(plain), []);
    });

    test('grid over TLS: the same flags as the race; beside an embedded cluster, as beside the embedded server, refused', async () => {
      const gridded = await runCli([
        'grid',
        '--url',
        tlsUrl,
        '--tls-ca',
        certs.ca,
        ...clientCert(),
        '--mode',
        'atomic',
        '--jobs',
        '200',
        '--vary',
        'sweepers=1,2',
        '--json',
      ]);
      assert.equal(gridded.code, 0, gridded.stderr);
      const report = JSON.parse(gridded.stdout) as { server: { url: string }; cells: { modes: { doubleRecoveries: number }[] }[] };
      assert.equal(report.server.url, tlsUrl);
      assert.deepEqual(
        report.cells.map((cell) => cell.modes.map((m) => m.doubleRecoveries)),
        [[0], [0]],
      );
      assert.deepEqual(await allKeys(plain), []);
      for (const words of [['grid', '--vary', 'sweepers=1,2'], []]) {
        const refused = await runCli([...words, '--embedded-cluster', '3', '--tls-ca', certs.ca]);
        assert.equal(refused.code, 2, refused.stderr);
        assert.match(oneErrorLine(refused.stderr) ?? '', /--tls-ca: only applies to a rediss:\/\/ --url/, words.join(' '));
      }
    });

    test('--latency over TLS: the proxy passes TLS through untouched, in one process and in --processes', async () => {
      // With --processes one sweeper: its child makes its own TLS connection through the proxy, and
      // every child is sent the same setup, so more would only add Node start-ups.
      for (const processes of [[], ['--processes']]) {
        const result = await runCli([
          '--url',
          tlsUrl,
          '--tls-ca',
          certs.ca,
          ...clientCert(),
          ...processes,
          '--latency',
          '2',
          '--sweepers',
          processes.length === 0 ? '2' : '1',
          '--jobs',
          '60',
          '--mode',
          'atomic',
          '--json',
        ]);
        assert.equal(result.code, 0, result.stderr);
        const report = JSON.parse(result.stdout) as {
          latency: { measuredRttMs: { median: number } };
          runs: { recoveries: number; doubleRecoveries: number; callMsP50: number | null }[];
        };
        assert.ok(report.latency.measuredRttMs.median >= 2);
        assert.equal(report.runs[0]?.recoveries, 60);
        assert.equal(report.runs[0]?.doubleRecoveries, 0);
        if (processes.length === 0) assert.ok((report.runs[0]?.callMsP50 ?? 0) >= 2);
      }
      assert.deepEqual(await allKeys(plain), []);
    });

    test('through the proxy the certificate is still checked against the --url host, not the proxy address', async () => {
      const port = Number(new URL(tlsUrl).port);
      const proxy = await startLatencyProxy({ targetHost: '127.0.0.1', targetPort: port, delayMs: 1 });
      try {
        const tls = { ca: readFileSync(certs.ca), cert: readFileSync(certs.clientCert), key: readFileSync(certs.clientKey), rejectUnauthorized: true };
        const good = await connect(throughProxy({ url: tlsUrl, display: tlsUrl, tls }, proxy));
        assert.equal(await good.ping(), 'PONG');
        await good.quit();
        // The certificate names 127.0.0.1 only, as does the proxy's address: asked for as localhost,
        // the server must be refused even though the socket itself goes to 127.0.0.1.
        const misnamed = `rediss://localhost:${port}`;
        await assert.rejects(connect(throughProxy({ url: misnamed, display: misnamed, tls }, proxy)), /localhost/);
      } finally {
        await proxy.close();
      }
    });

    test('unix:// socket: runs clean and leaves nothing', async () => {
      const result = await runCli(['--url', socketUrl, '--jobs', '100', '--mode', 'atomic', '--expect', 'clean']);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, /at unix:\/\//);
      assert.deepEqual(await allKeys(plain), []);
    });

    test('a password the server asks for and the URL lacks: the line shows where it goes in a URL of that kind', async () => {
      await plain.call('CONFIG', 'SET', 'requirepass', 'Zq7sock');
      try {
        const cases: readonly (readonly [string[], string])[] = [
          [['--url', server.url], '(redis://[user:]password@host:port)'],
          [['--url', tlsUrl, '--tls-ca', certs.ca, ...clientCert()], '(rediss://[user:]password@host:port)'],
          [['--url', socketUrl], `as its query's "password" parameter (with "username" for a user other than default)`],
        ];
        for (const [args, form] of cases) {
          const result = await runCli([...args, '--jobs', '10']);
          assert.equal(result.code, 3, result.stderr);
          assert.ok(oneErrorLine(result.stderr)?.endsWith(`requires a password: put it in the URL ${form}`), result.stderr);
        }
        // The form the line gives a socket works.
        const given = await runCli(['--url', `${socketUrl}?password=Zq7sock`, '--jobs', '10', '--mode', 'atomic', '--expect', 'clean']);
        assert.equal(given.code, 0, given.stderr);
      } finally {
        await plain.call('CONFIG', 'SET', 'requirepass', '');
      }
      assert.deepEqual(await allKeys(plain), []);
    });

    test('client certificates not required (tls-auth-clients no): the CA alone is enough', async () => {
      await plain.call('CONFIG', 'SET', 'tls-auth-clients', 'no');
      const result = await runCli(['--url', tlsUrl, '--tls-ca', certs.ca, '--jobs', '300', '--expect', 'race']);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(await allKeys(plain), []);
    });
  });
}
