/**
 * Passwords never printed: every URL form ioredis would accept (user info with or without a user
 * name, `?password=` in the query, a password with '/', '@' and '%', a database), each through
 * every output the tool has (the table, --json, --csv, the trials table, the progress line on a
 * terminal, --keep's lines, --html, explain's text, --json, --html and --svg, clean), and every
 * kind of bad or unreachable URL through its error line. The server asks for the password.
 *
 * A warning Node or ioredis prints goes around the `Io` seam, so a spawned process, as a user runs
 * it, is kept wherever such a warning could come from: one URL form through each command that opens
 * connections of its own (the race, with its table, --keep and --html, and on a terminal with its
 * progress, explain's text and clean; the race's --json, --csv and trials and explain's --json,
 * --html and --svg, the same connections put to other outputs, run in-process like the other
 * forms), the backslash Node warns about, and each failure met on a connection (refused
 * credentials for the main command and for clean, an unreachable server, a TLS handshake). The
 * other forms take the same outputs, and the failures refused before any connection is made,
 * in-process through the `Io` seam, with this process's own stderr and warnings watched while
 * they run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { startEmbeddedServer, which, type EmbeddedServer } from '../../src/server/embedded-server.js';
import { BIN, cliResult, runCli, spawnCli, type CliResult } from '../helpers/cli.js';
import { runInProcess } from '../helpers/in-process.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { oneServerKind } from '../helpers/servers.js';

/** One password with every character that trips URL handling; any leak shows its start or its end. */
const PASSWORD = 'Zq7/p@ss%w0rd';
const NEEDLES = ['Zq7', 'w0rd'];
const encoded = encodeURIComponent(PASSWORD);

function assertNoSecret(what: string, ...texts: string[]): void {
  for (const text of texts) for (const needle of NEEDLES) assert.ok(!text.includes(needle), `${what} shows the password (${needle}):\n${text}`);
}

/** The CLI on a pseudo-terminal (util-linux `script`), so the progress line is written; stdout and stderr come back together. */
function runOnTerminal(args: readonly string[]): Promise<CliResult> {
  const command = [process.execPath, BIN, ...args].map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qefc', command, '/dev/null'], {
      env: { ...process.env, REDIS_URL: '', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(cliResult(code, signal, stdout, stderr)));
  });
}

// The tool's own process is the subject: one server kind for this file (oneServerKind).
const kind = oneServerKind(import.meta.url).find((k) => which(k.bin) !== undefined);

/**
 * `body` run in this process, with whatever reaches this process's stderr, and any warning Node
 * emits, while it runs (and a tick after, when warnings are printed) returned beside it.
 */
async function watchingStrays<T>(body: () => Promise<T>): Promise<{ result: T; strays: string }> {
  let strays = '';
  const write = process.stderr.write;
  const onWarning = (warning: Error): void => void (strays += `${warning.name}: ${warning.message}\n`);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    strays += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    return (write as (...args: unknown[]) => boolean).call(process.stderr, chunk, ...rest);
  }) as typeof process.stderr.write;
  process.on('warning', onWarning);
  try {
    const result = await body();
    await new Promise((resolve) => setImmediate(resolve));
    return { result, strays };
  } finally {
    process.stderr.write = write;
    process.off('warning', onWarning);
  }
}

/** The command line in-process, as `runCli` runs it, with its strays added to its stderr so every check sees them. */
async function runWatched(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const { result, strays } = await watchingStrays(() => runCli(args, env));
  return { ...result, stderr: result.stderr + strays };
}

/** The progress on a terminal, in-process: stderr says it is one; stdout and stderr together, as `script` gives them. */
async function runWatchedOnTerminal(args: readonly string[]): Promise<CliResult> {
  const { result, strays } = await watchingStrays(() =>
    runInProcess(args, { env: { REDIS_URL: '', NO_COLOR: '1' }, stderrIsTty: true, stderrColumns: 80, stdinIsTty: false }),
  );
  return cliResult(result.code, null, result.stdout + result.rawStderr + strays, '');
}

describe('secrecy: no output shows a password', { skip: kind ? false : 'neither redis-server nor valkey-server is installed' }, () => {
  let server: EmbeddedServer;
  let admin: Redis;
  let dir: string;
  let port: number;
  before(async () => {
    server = await startEmbeddedServer({ bin: kind?.bin ?? 'redis-server' });
    port = server.port;
    admin = await connect(parseServerUrl(server.url));
    await admin.call('ACL', 'SETUSER', 'racer', 'on', `>${PASSWORD}`, '~*', '&*', '+@all');
    await admin.call('CONFIG', 'SET', 'requirepass', PASSWORD);
    dir = mkdtempSync(join(tmpdir(), 'emq-race-secrecy-'));
  });
  after(async () => {
    admin?.disconnect();
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // ioredis's debug lines show every command's arguments, AUTH's among them: under DEBUG they stay
  // off, in the tool and in its sweeper processes, and the run says so.
  test('DEBUG=* (spawned, with --processes): the race runs, a note says ioredis stays quiet, and no line shows the password', async () => {
    const url = `redis://racer:${encoded}@127.0.0.1:${port}`;
    const result = await spawnCli(['--url', url, '--jobs', '50', '--mode', 'atomic', '--processes', '--sweepers', '2'], { DEBUG: '*' });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^emq-race: DEBUG: ioredis's lines stay off \(they would show the AUTH command's password\)$/m);
    assertNoSecret('DEBUG=*', result.stdout, result.stderr);
    const other = await spawnCli(['--version'], { DEBUG: 'express:*' });
    assert.doesNotMatch(other.stderr, /DEBUG/, 'a DEBUG that names no ioredis line is left without a note');
  });

  // Bee-Queue's own `redis` client (version 3) prints every command it sends, AUTH's among them,
  // when NODE_DEBUG names `redis`: that name stays out, and the run says so.
  test('NODE_DEBUG=redis with --lib bee-queue (spawned): the run goes on, a note says its client stays quiet, and no line shows the password', async () => {
    const url = `redis://racer:${encoded}@127.0.0.1:${port}`;
    const result = await spawnCli(['--url', url, '--lib', 'bee-queue', '--jobs', '20'], { NODE_DEBUG: 'redis,net' });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^emq-race: NODE_DEBUG: the redis client's lines stay off \(they would show the AUTH command's password\)$/m);
    assertNoSecret('NODE_DEBUG=redis', result.stdout, result.stderr);
  });

  // Node prints every child's environment under NODE_DEBUG=child_process: REDIS_URL is not in it,
  // whether the run uses it (the sweepers' processes) or not (an embedded cluster's nodes).
  test('NODE_DEBUG=child_process with REDIS_URL (spawned): the children are shown without REDIS_URL', async () => {
    const env = { REDIS_URL: `redis://racer:${encoded}@127.0.0.1:${port}`, NODE_DEBUG: 'child_process' };
    for (const args of [['--processes'], ['--embedded-cluster', '3']]) {
      const result = await spawnCli(['--mode', 'atomic', '--jobs', '20', ...args], env);
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stderr, /^CHILD_PROCESS \d+: spawn/m, `${args[0]}: NODE_DEBUG printed no child`);
      assertNoSecret(`NODE_DEBUG=child_process ${args[0]}`, result.stdout, result.stderr);
    }
  });

  // A server whose error repeats AUTH's arguments: Redis 4 to 6 and KeyDB, with AUTH renamed away,
  // answer "unknown command `auth`, with args beginning with: …"; any other may say it in its own words.
  for (const reply of ['ERR unknown command `auth`, with args beginning with: `racer`, `Zq7/p@ss%w0rd`, ', 'ERR invalid password racer Zq7/p@ss%w0rd']) {
    test(`a server that answers AUTH with "${reply.slice(0, 24)}…" (in-process): one line, exit 3, no password`, async () => {
      const fake = createServer((socket) => {
        socket.on('data', () => socket.write(`-${reply}\r\n`));
        socket.on('error', () => {});
      });
      await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
      try {
        const { port: fakePort } = fake.address() as AddressInfo;
        for (const args of [[], ['--json']]) {
          const result = await runWatched(['--url', `redis://racer:${encoded}@127.0.0.1:${fakePort}`, '--jobs', '20', ...args]);
          assert.equal(result.code, 3, result.stderr);
          assert.ok(oneErrorLine(result.stderr), result.stderr);
          assertNoSecret(reply, result.stdout, result.stderr);
        }
      } finally {
        await new Promise((resolve) => fake.close(resolve));
      }
    });
  }

  // `spawned`: the one form run as a user runs it, through every output (see the top of the file).
  const forms: readonly { name: string; url: () => string; env?: boolean; spawned?: boolean }[] = [
    { name: 'user:password@', url: () => `redis://racer:${encoded}@127.0.0.1:${port}`, spawned: true },
    { name: ':password@ (the default user)', url: () => `redis://:${encoded}@127.0.0.1:${port}` },
    { name: '?password= in the query', url: () => `redis://127.0.0.1:${port}/?password=${encoded}` },
    { name: '?username=&password= without a slash, from REDIS_URL', url: () => `redis://127.0.0.1:${port}?username=racer&password=${encoded}`, env: true },
    { name: 'user:password@ with a database', url: () => `redis://racer:${encoded}@127.0.0.1:${port}/0` },
  ];

  forms.forEach((form, index) => {
    const how = form.spawned ? 'spawned' : 'in-process';
    test(`${form.name} (${how}): table, --keep, --html, --json, --csv, trials, progress, explain (text, --json, --html, --svg) and clean`, async () => {
      const url = form.url();
      // The URL as --url after the (sub)command's name, or as REDIS_URL; `inProcess` for an output
      // whose connections a spawned run of the same form already opened (see the top of the file).
      const call = (words: string[], args: string[], inProcess = false): Promise<CliResult> => {
        const runner = form.spawned && !inProcess ? spawnCli : runWatched;
        return form.env ? runner([...words, ...args], { REDIS_URL: url }) : runner([...words, '--url', url, ...args]);
      };
      const onTerminal = form.spawned ? runOnTerminal : runWatchedOnTerminal;
      const queue = `race-secret${index}`;
      const html = join(dir, `race${index}.html`);
      const explainHtml = join(dir, `explain${index}.html`);
      const svg = join(dir, `explain${index}.svg`);
      const results: [string, CliResult][] = [
        ['table, --keep and --html', await call([], ['--mode', 'atomic', '--jobs', '200', '--queue', queue, '--keep', '--html', html])],
        ['--json', await call([], ['--mode', 'atomic', '--jobs', '200', '--json'], true)],
        ['--csv', await call([], ['--mode', 'atomic', '--jobs', '200', '--csv'], true)],
        ['trials with --queues', await call([], ['--mode', 'atomic', '--jobs', '100', '--trials', '2', '--queues', '2'], true)],
        ['explain text', await call(['explain'], ['--mode', 'atomic'])],
        ['explain --json, --html, --svg', await call(['explain'], ['--json', '--html', explainHtml, '--svg', svg], true)],
        ['clean', await call(['clean'], ['--all', '--yes'])],
      ];
      if (!form.env) results.push(['progress on a terminal', await onTerminal(['--url', url, '--mode', 'atomic', '--jobs', '100', '--trials', '2'])]);
      for (const [what, result] of results) {
        assert.equal(result.code, 0, `${what}: ${result.stderr}${result.stdout}`);
        assertNoSecret(what, result.stdout, result.stderr);
      }
      const [kept, json] = [results[0]?.[1], results[1]?.[1]];
      assert.match(kept?.stdout ?? '', new RegExp(`kept: queue ${queue}`));
      assert.match(kept?.stdout ?? '', /at redis:\/\/[^\s]*\*\*\*/);
      assert.match((JSON.parse(json?.stdout ?? '{}') as { server: { url: string } }).server.url, /\*\*\*/);
      assert.match(results.find(([what]) => what === 'clean')?.[1].stdout ?? '', new RegExp(`removed queue ${queue}`));
      if (!form.env) assert.match(results.at(-1)?.[1].stdout ?? '', /trial 1\/2, atomic/);
      for (const file of [html, explainHtml, svg]) assertNoSecret(file, readFileSync(file, 'utf8'));
      assert.match(readFileSync(html, 'utf8'), /--url/);
    });
  });

  // `spawned`: a failure where Node or ioredis could print a warning of its own (see the top of the file).
  const failures: readonly { name: string; args: () => string[]; env?: () => NodeJS.ProcessEnv; code: number; line: RegExp; spawned?: boolean }[] = [
    { name: "a raw '/' and '@' in the password", args: () => ['--url', `redis://:${PASSWORD}@127.0.0.1:${port}`], code: 2, line: /is not a URL/ },
    {
      name: 'a backslash (Node would warn with the URL in it)',
      args: () => ['--url', `redis://:Zq7\\w0rd@127.0.0.1:${port}`],
      code: 2,
      line: /contains a backslash/,
      spawned: true,
    },
    { name: "a '%' that starts no escape", args: () => ['--url', `redis://:Zq7%zzw0rd@127.0.0.1:${port}`], code: 2, line: /percent-escape/ },
    { name: 'a port that is no number', args: () => ['--url', `redis://:Zq7w0rd@127.0.0.1:notaport`], code: 2, line: /is not a URL/ },
    {
      name: 'a database that is no number',
      args: () => ['--url', `redis://:Zq7w0rd@127.0.0.1:${port}/?db=abc`],
      code: 2,
      line: /the database .* must be a number/,
    },
    {
      name: 'an unsupported query parameter beside ?password=',
      args: () => ['--url', `redis://127.0.0.1:${port}/?keyPrefix=x&password=Zq7w0rd`],
      code: 2,
      line: /a query parameter in .* is not supported; the query may only give password, username, db/,
    },
    {
      name: 'a parameter after ?password=, which may be its tail',
      args: () => ['--url', `redis://127.0.0.1:${port}/?password=Zq7&w0rd`],
      code: 2,
      line: /a query parameter in "redis:\/\/127\.0\.0\.1:\d+\/\?password=\*\*\*&\*\*\*" is not supported/,
    },
    {
      name: 'the URL where a command goes',
      args: () => [`redis://:Zq7w0rd@127.0.0.1:${port}`],
      code: 2,
      line: /is not a command: a server URL goes after --url/,
    },
    {
      name: 'a password where a command goes',
      args: () => [':Zq7w0rd@127.0.0.1'],
      code: 2,
      line: /neither a command nor a flag \(not shown: it may be a password\)/,
    },
    {
      name: 'a wrong password',
      args: () => ['--url', `redis://racer:Zq7-wrong-w0rd@127.0.0.1:${port}`],
      code: 3,
      line: /refused the credentials/,
      spawned: true,
    },
    { name: 'a wrong ?password=', args: () => ['--url', `redis://127.0.0.1:${port}/?password=Zq7-wrong-w0rd`], code: 3, line: /refused the credentials/ },
    {
      name: 'an unreachable port, from REDIS_URL',
      args: () => [],
      env: () => ({ REDIS_URL: 'redis://:Zq7w0rd@127.0.0.1:1' }),
      code: 3,
      line: /cannot reach/,
      spawned: true,
    },
    {
      name: 'rediss:// on a plain port',
      args: () => ['--url', `rediss://:Zq7w0rd@127.0.0.1:${port}`, '--tls-insecure'],
      code: 3,
      line: /TLS handshake/,
      spawned: true,
    },
    { name: 'explain with a bad URL', args: () => ['explain', '--url', `redis://:Zq7/w0rd@127.0.0.1:${port}`], code: 2, line: /is not a URL/ },
    {
      name: 'clean with a wrong password',
      args: () => ['clean', '--url', `redis://:Zq7-wrong-w0rd@127.0.0.1:${port}`, '--all', '--yes'],
      code: 3,
      line: /refused the credentials/,
      spawned: true,
    },
  ];
  for (const failure of failures) {
    test(`${failure.name} (${failure.spawned ? 'spawned' : 'in-process'}): one line, exit ${failure.code}, no password`, async () => {
      const result = await (failure.spawned ? spawnCli : runWatched)(failure.args(), failure.env?.() ?? {});
      assert.equal(result.code, failure.code, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? '', failure.line, result.stderr);
      assertNoSecret(failure.name, result.stdout, result.stderr);
    });
  }
});
