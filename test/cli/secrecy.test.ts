/**
 * Passwords never printed: every URL form ioredis would accept (user info with or without a user
 * name, `?password=` in the query, a password with '/', '@' and '%', a database), each through
 * every output the tool has (the table, --json, --csv, the trials table, the progress line on a
 * terminal, --keep's lines, --html, explain's text, --json, --html and --svg, clean), and every
 * kind of bad or unreachable URL through its error line, as a user runs it: a spawned process,
 * so a warning Node or ioredis prints would be caught too. The server asks for the password.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { startEmbeddedServer, which, type EmbeddedServer } from '../../src/server/embedded-server.js';
import { BIN, cliResult, spawnCli, type CliResult } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { SERVER_KINDS } from '../helpers/servers.js';

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

const kind = SERVER_KINDS.find((k) => which(k.bin) !== undefined);

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

  const forms: readonly { name: string; url: () => string; env?: boolean }[] = [
    { name: 'user:password@', url: () => `redis://racer:${encoded}@127.0.0.1:${port}` },
    { name: ':password@ (the default user)', url: () => `redis://:${encoded}@127.0.0.1:${port}` },
    { name: '?password= in the query', url: () => `redis://127.0.0.1:${port}/?password=${encoded}` },
    { name: '?username=&password= without a slash, from REDIS_URL', url: () => `redis://127.0.0.1:${port}?username=racer&password=${encoded}`, env: true },
    { name: 'user:password@ with a database', url: () => `redis://racer:${encoded}@127.0.0.1:${port}/0` },
  ];

  forms.forEach((form, index) => {
    test(`${form.name}: table, --keep, --html, --json, --csv, trials, progress, explain (text, --json, --html, --svg) and clean`, async () => {
      const url = form.url();
      // The URL as --url after the (sub)command's name, or as REDIS_URL.
      const call = (words: string[], args: string[]): Promise<CliResult> =>
        form.env ? spawnCli([...words, ...args], { REDIS_URL: url }) : spawnCli([...words, '--url', url, ...args]);
      const queue = `race-secret${index}`;
      const html = join(dir, `race${index}.html`);
      const explainHtml = join(dir, `explain${index}.html`);
      const svg = join(dir, `explain${index}.svg`);
      const results: [string, CliResult][] = [
        ['table, --keep and --html', await call([], ['--mode', 'atomic', '--jobs', '200', '--queue', queue, '--keep', '--html', html])],
        ['--json', await call([], ['--mode', 'atomic', '--jobs', '200', '--json'])],
        ['--csv', await call([], ['--mode', 'atomic', '--jobs', '200', '--csv'])],
        ['trials with --queues', await call([], ['--mode', 'atomic', '--jobs', '100', '--trials', '2', '--queues', '2'])],
        ['explain text', await call(['explain'], ['--mode', 'atomic'])],
        ['explain --json, --html, --svg', await call(['explain'], ['--json', '--html', explainHtml, '--svg', svg])],
        ['clean', await call(['clean'], ['--all', '--yes'])],
      ];
      if (!form.env) results.push(['progress on a terminal', await runOnTerminal(['--url', url, '--mode', 'atomic', '--jobs', '100', '--trials', '2'])]);
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

  const failures: readonly { name: string; args: () => string[]; env?: () => NodeJS.ProcessEnv; code: number; line: RegExp }[] = [
    { name: "a raw '/' and '@' in the password", args: () => ['--url', `redis://:${PASSWORD}@127.0.0.1:${port}`], code: 2, line: /is not a URL/ },
    {
      name: 'a backslash (Node would warn with the URL in it)',
      args: () => ['--url', `redis://:Zq7\\w0rd@127.0.0.1:${port}`],
      code: 2,
      line: /contains a backslash/,
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
      args: () => ['--url', `redis://127.0.0.1:${port}/?password=Zq7w0rd&keyPrefix=x`],
      code: 2,
      line: /query parameter "keyPrefix"/,
    },
    { name: 'the URL where a command goes', args: () => [`redis://:Zq7w0rd@127.0.0.1:${port}`], code: 2, line: /unknown command/ },
    { name: 'a wrong password', args: () => ['--url', `redis://racer:Zq7-wrong-w0rd@127.0.0.1:${port}`], code: 3, line: /refused the credentials/ },
    { name: 'a wrong ?password=', args: () => ['--url', `redis://127.0.0.1:${port}/?password=Zq7-wrong-w0rd`], code: 3, line: /refused the credentials/ },
    { name: 'an unreachable port, from REDIS_URL', args: () => [], env: () => ({ REDIS_URL: 'redis://:Zq7w0rd@127.0.0.1:1' }), code: 3, line: /cannot reach/ },
    { name: 'rediss:// on a plain port', args: () => ['--url', `rediss://:Zq7w0rd@127.0.0.1:${port}`, '--tls-insecure'], code: 3, line: /TLS handshake/ },
    { name: 'explain with a bad URL', args: () => ['explain', '--url', `redis://:Zq7/w0rd@127.0.0.1:${port}`], code: 2, line: /is not a URL/ },
    {
      name: 'clean with a wrong password',
      args: () => ['clean', '--url', `redis://:Zq7-wrong-w0rd@127.0.0.1:${port}`, '--all', '--yes'],
      code: 3,
      line: /refused the credentials/,
    },
  ];
  for (const failure of failures) {
    test(`${failure.name}: one line, exit ${failure.code}, no password`, async () => {
      const result = await spawnCli(failure.args(), failure.env?.() ?? {});
      assert.equal(result.code, failure.code, result.stderr);
      assert.match(oneErrorLine(result.stderr) ?? '', failure.line, result.stderr);
      assertNoSecret(failure.name, result.stdout, result.stderr);
    });
  }
});
