/**
 * What the tool reads from a --url (and what it refuses), and flags in odd places: each bad input
 * is one line and exit 2, never a stack trace, and a flag before a subcommand reaches it.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { before, test } from 'node:test';
import { EmqError } from '../../src/shared/errors.js';
import { parseExplainModes } from '../../src/cli/explain-command.js';
import { connect, parseServerUrl, redactUrl, scrubUrlText, serverAddress } from '../../src/server/connection.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { literal } from '../helpers/literal.js';
import { makeCerts } from '../helpers/certs.js';
import { forEachServer } from '../helpers/servers.js';

function usage(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (err: unknown) => err instanceof EmqError && err.exitCode === 2 && pattern.test(err.message));
}

test('serverAddress: host, port, credentials and database from every form, decoded', () => {
  assert.deepEqual(serverAddress('redis://127.0.0.1:6380'), { host: '127.0.0.1', port: 6380 });
  assert.deepEqual(serverAddress('redis://user:p%2Fw%40d%25@h:1/2'), { host: 'h', port: 1, username: 'user', password: 'p/w@d%', db: 2 });
  assert.deepEqual(serverAddress('redis://h?password=a%2Fb&username=u&db=3'), { host: 'h', port: 6379, username: 'u', password: 'a/b', db: 3 });
  assert.deepEqual(serverAddress('rediss://[::1]:6390'), { host: '::1', port: 6390 });
  assert.deepEqual(serverAddress('unix:///tmp/redis%20x.sock?password=pw'), { path: '/tmp/redis x.sock', password: 'pw' });
});

test('serverAddress: what ioredis would read another way, or not at all, is a usage error', () => {
  usage(() => serverAddress('redis://h:1/Zq7w0rd'), /^--url: the database in "redis:\/\/h:1\/\*\*\*" must be a number$/);
  // A database that is no number is not shown either: it may be a password put in the wrong place.
  usage(() => serverAddress('redis://h:1/?db=abc'), /^--url: the database in "redis:\/\/h:1\/\?db=\*\*\*" must be a number$/);
  usage(
    () => serverAddress('redis://u:#Zq7w0rd@h:1'),
    /^--url: "redis:\/\/\*\*\*" has a '#', after which a URL's parser reads nothing as the address; percent-encode a '#' in a password as %23$/,
  );
  // A '#' anywhere else cuts the URL short as silently: a query's password, or a fragment dropped unread.
  usage(
    () => serverAddress('redis://h:1/?username=u&password=Zq9#Sekrit'),
    /^--url: "redis:\/\/h:1\/\?username=u&password=\*\*\*#\*\*\*" has a '#', and a URL's parser drops it and all that follows; percent-encode a '#' in a password as %23$/,
  );
  usage(() => serverAddress('redis://h:1#Zq9Sekrit'), /^--url: "redis:\/\/h:1#\*\*\*" has a '#', and a URL's parser drops it and all that follows/);
  assert.equal(serverAddress('redis://h:1/?password=Zq9%23Sekrit').password, 'Zq9#Sekrit', "a '#' percent-encoded is the password's");
  usage(() => serverAddress('redis://:secret\\@h:1'), /^--url: "redis:\/\/:\*\*\*@h:1" contains a backslash/);
  usage(() => serverAddress('redis://:se%zzcret@h:1'), /^--url: the password in "redis:\/\/:\*\*\*@h:1" has a '%' that starts no percent-escape/);
  usage(() => serverAddress('redis://h:0'), /^--url: port 0 in "redis:\/\/h:0" is not a port a server can listen on/);
  // A unix socket is this machine's: a host would be dropped unread, or the path's first folder read as one.
  for (const url of ['unix://otherhost/tmp/r.sock', 'unix://tmp/r.sock', 'unix://h:7/tmp/r.sock']) {
    usage(
      () => serverAddress(url),
      /names a host before its socket path, which a unix:\/\/ URL does not take; write the path after three slashes, and a user or password in the query: unix:\/\/\/path\/to\/socket\?password=…$/,
    );
  }
  // Nor one or no slash after unix:, which a parser takes, where a one-slash redis:/ is refused as a typo.
  for (const url of ['unix:/tmp/r.sock', 'unix:tmp/r.sock?password=Zq7w0rd']) {
    usage(() => serverAddress(url), /writes its socket path without the "\/\/" after unix:; write it after three slashes: unix:\/\/\/path\/to\/socket$/);
  }
  usage(() => serverAddress('redis://h:65536'), /^--url: "redis:\/\/h:65536" has a port past 65535; expected 1 to 65535$/);
  usage(() => serverAddress('redis://:Zq7w0rd@[::1]:99999/0'), /^--url: "redis:\/\/:\*\*\*@\[::1\]:99999\/0" has a port past 65535/);
  usage(() => serverAddress('redis://h:65535x'), /has a port that is not a number/);
  // An '@' anywhere may end a password that holds a raw '/': no guess at which part failed.
  usage(() => serverAddress('redis://:pa/ss@h:1'), /is not a URL/);
  usage(
    () => serverAddress('redis://:S3cr3t@h:1/0?password=other'),
    /^--url: "redis:\/\/:\*\*\*@h:1\/0\?password=\*\*\*" gives two different values for the password; give it once$/,
  );
  usage(() => serverAddress('redis://h:1/?password=a&password=b'), /gives two different values for the password; give it once$/);
  usage(() => serverAddress('redis://u@h:1/?username=v'), /gives two different values for the user name; give it once$/);
  usage(() => serverAddress('redis://h:1/2?db=3'), /^--url: "redis:\/\/h:1\/2\?db=3" gives two different values for the database; give it once$/);
  assert.equal(serverAddress('redis://h:1/?db=3&password=p').password, 'p', 'each once is fine');
  assert.equal(serverAddress('redis://:p@h:1/3?db=3&password=p&db=3').db, 3, 'the same value twice is the same value');
  usage(() => serverAddress('redis://h:1/?keyPrefix=other:'), /^--url: a query parameter in "redis:\/\/h:1\/\?\*\*\*" is not supported/);
  usage(() => serverAddress('redis://h:1/?password=Zq7%'), /^--url: the query in "redis:\/\/h:1\/\?password=\*\*\*" has a '%' that starts no percent-escape/);
  // A '/' before the '@' could as well start a path whose query holds a password: nothing after the scheme is shown.
  usage(() => serverAddress('redis://:sec/ret@h:1'), /^--url: "redis:\/\/\*\*\*" is not a URL/);
});

test('redactUrl and scrubUrlText: every password form becomes ***, user names and the rest stay', () => {
  assert.equal(redactUrl('redis://user:secret@host:1/2'), 'redis://user:***@host:1/2');
  assert.equal(redactUrl('redis://:secret@host:1'), 'redis://:***@host:1');
  assert.equal(redactUrl('redis://host:1/?password=secret&db=2'), 'redis://host:1/?password=***&***');
  assert.equal(redactUrl('redis://host:1/?db=2&password=secret'), 'redis://host:1/?db=2&password=***');
  assert.equal(redactUrl('redis://host:1?Password=secret'), 'redis://host:1?***');
  assert.equal(redactUrl('redis://:sec/ret@host:1'), 'redis://***');
  assert.equal(redactUrl('redis://:s#c?r/t@host:1'), 'redis://***');
  assert.equal(redactUrl('redis://:secret\\@host:1'), 'redis://:***@host:1');
  assert.equal(redactUrl('redis://host:1'), 'redis://host:1');
  assert.equal(
    scrubUrlText("unknown command 'redis://u:secret@h:1' and rediss://h?password=x&db=1"),
    "unknown command 'redis://u:***@h:1' and rediss://h?password=***",
  );
  // A usage pattern is no user info.
  assert.equal(scrubUrlText('expected redis://[user:password@]host:port'), 'expected redis://[user:password@]host:port');
});

/**
 * The case of a flag (the first word of `usage`) whose value was left out, `next` (another flag)
 * following it: the one line that says so, whole.
 */
function leftOut(name: string, args: string[], next: string, usage: string): { name: string; args: string[]; line: RegExp } {
  const flag = usage.split(' ')[0] ?? '';
  const line = `emq-race: ${flag}: no value given: the flag ${next} follows it; give the value right after ${flag} (${usage})`;
  return { name, args, line: new RegExp(`^${literal(line)}$`) };
}

const CLI_CASES: readonly { name: string; args: string[]; line: RegExp }[] = [
  { name: '?db=abc', args: ['--url', 'redis://127.0.0.1:6390/?db=abc'], line: /the database in .* must be a number/ },
  { name: 'a backslash in the URL', args: ['--url', 'redis://:secret\\@127.0.0.1:6390'], line: /contains a backslash/ },
  { name: 'port 0', args: ['--url', 'redis://127.0.0.1:0'], line: /port 0 .* is not a port a server can listen on/ },
  // A port the parser refuses, or an IPv6 host without brackets: the part named, from the redacted
  // form only (the word after the ':' may be a password that lost its '@host': `redis://:secret`).
  // A hex password that lost its '@host' is no IPv6 address: the port's line, with the password's place.
  ...[
    'redis://127.0.0.1:notaport',
    'redis://127.0.0.1:+6390',
    'redis://:secret',
    'redis://[::1]:x1',
    'redis://:9f86d081884c7d65:6390',
    'redis://dead:beef:6390',
  ].map((url) => ({
    name: `a port that is not a number (${url})`,
    args: ['--url', url],
    line: /^emq-race: --url: "redis:\/\/\*\*\*" has a port that is not a number; expected 1 to 65535 after the host's ':' \(a password goes before the host: redis:\/\/:\*\*\*@host:port\)$/,
  })),
  ...['redis://::1:6390', 'redis://fe80::1', 'redis://2001:db8:0:0:0:0:0:1:6390'].map((url) => ({
    name: `an IPv6 host without brackets (${url})`,
    args: ['--url', url],
    line: /^emq-race: --url: "redis:\/\/\*\*\*" has an IPv6 address without its brackets; write it as redis:\/\/\[ADDRESS\]:PORT \(redis:\/\/\[::1\]:6379\)$/,
  })),

  // A flag where a value goes is a value left out: said so, the flag named, before anything is parsed.
  leftOut('--queue --help', ['--queue', '--help'], '--help', '--queue <name>'),
  leftOut('--html --json', ['--html', '--json'], '--json', '--html <file>'),
  leftOut('--jobs --sweepers 4', ['--jobs', '--sweepers', '4'], '--sweepers', '--jobs <n>'),
  // Not "an argument that is neither a command nor a flag", as the 4 left standing alone made it.
  leftOut('--url --sweepers 4', ['--url', '--sweepers', '4'], '--sweepers', '--url <url>'),
  // The flag after it is named without what follows its '=': a URL with a password, here.
  leftOut('--url --url=URL', ['--url', '--url=redis://:secret@127.0.0.1:1'], '--url', '--url <url>'),
  leftOut("a subcommand's flag", ['explore', '--max-switches', '--json'], '--json', '--max-switches <k>'),
  {
    name: 'a value left out at the end',
    args: ['--jobs', '5', '--sweepers'],
    line: /^emq-race: --sweepers: no value given; give the value right after --sweepers \(--sweepers <n>\)$/,
  },
  // The grid's axis may name its flag with the dashes: that is --vary's value, read by the axis's own parser.
  { name: 'grid --vary --sweepers=1,0', args: ['grid', '--vary', '--sweepers=1,0'], line: /^emq-race: --sweepers: 0 is out of range; expected 1 to 256$/ },
  // A word that starts with '-' but is no flag of the tool is still the flag's value, judged by its parser.
  { name: '--stalled-before -1', args: ['--stalled-before', '-1'], line: /^emq-race: --stalled-before: -1 is out of range; expected 0 to 999999$/ },
  { name: '--html -x', args: ['--html', '-x'], line: /^emq-race: --html: "-x" looks like an option, not a file name/ },
  {
    name: 'a race flag before explain',
    args: ['--jobs', '5', 'explain'],
    line: /unknown option '--jobs'; --jobs is a flag of the race itself and emq-race grid, not of explain \(emq-race help explain lists its flags\)$/,
  },
  {
    name: 'a race flag given to explore',
    args: ['explore', '--lib', 'bullmq'],
    line: /^emq-race: unknown option '--lib'; --lib is a flag of the race itself and emq-race grid, not of explore \(emq-race help explore lists its flags\)$/,
  },
  {
    name: "a race flag given to explore, with commander's suggestion",
    args: ['explore', '--sweepers', '3'],
    line: /^emq-race: unknown option '--sweepers' \(Did you mean --sweeps\?\); --sweepers is a flag of the race itself and emq-race grid, not of explore/,
  },
  {
    name: 'a race flag given to explore that commander takes for --help',
    args: ['explore', '--keep'],
    line: /^emq-race: unknown option '--keep'; --keep is a flag of the race itself and emq-race explain, not of explore \(emq-race help explore lists its flags\)$/,
  },
  {
    // grid registers --seed only to refuse it in a line of its own: no command to point at.
    name: 'a single-run flag given to explain, which grid refuses too',
    args: ['explain', '--seed', '3'],
    line: /^emq-race: unknown option '--seed'( \(Did you mean --keep\?\))?; --seed is a flag of the race itself, not of explain \(emq-race help explain lists its flags\)$/,
  },
  { name: 'a flag of no command, given to explore', args: ['explore', '--nosuch'], line: /^emq-race: unknown option '--nosuch'$/ },
  {
    name: "the grid's flag given to the race",
    args: ['--vary', 'sweepers=1,2'],
    line: /^emq-race: unknown option '--vary'; --vary is a flag of emq-race grid, not of the race itself \(emq-race help grid lists its flags\)$/,
  },
  {
    name: "explain's flag given to the race, with commander's suggestion",
    args: ['--counter', 'client'],
    line: /^emq-race: unknown option '--counter' \(Did you mean --cluster\?\); --counter is a flag of emq-race explain, not of the race itself/,
  },
  {
    name: 'a flag of three commands given to the race',
    args: ['--yes'],
    line: /^emq-race: unknown option '--yes' \(Did you mean --cycles\?\); --yes is a flag of emq-race clean, emq-race explore and emq-race grid, not of the race itself \(emq-race help clean lists its flags\)$/,
  },
  {
    name: 'a flag of the race and of three commands given to clean',
    args: ['clean', '--html', 'x.html'],
    line: /^emq-race: unknown option '--html'; --html is a flag of the race itself, emq-race explain, emq-race explore and emq-race grid, not of clean \(emq-race help clean lists its flags\)$/,
  },
  // The help is no flag commander combines with others: not "unknown option '-h'", a flag the tool has.
  // -v is the race's alone: given to explain with letters after it, it is the race's flag, not joined letters.
  {
    name: 'explain -vh',
    args: ['explain', '-vh'],
    line: /^emq-race: unknown option '-v'; -v is a flag of the race itself, not of explain \(emq-race help explain lists its flags\)$/,
  },
  ...[['-hv'], ['-hV'], ['explain', '-hv'], ['clean', '-hq']].map((args) => ({
    name: `${args.join(' ')}: a short flag with letters joined to it`,
    args,
    line: /^emq-race: -h with letters joined to it is no flag: give -h on its own, and each other flag as a word of its own$/,
  })),
  // As the failover drill's flags without the drill: a flag that would do nothing is refused. Port 1:
  // a flag wrongly let through would end in exit 3 (connection refused), not 2.
  {
    name: '--allow-server-wide without --fault script-flush',
    args: ['--allow-server-wide', '--fault', 'client-kill', '--url', 'redis://127.0.0.1:1'],
    line: /^emq-race: --allow-server-wide: only with --fault script-flush \(it lets that fault empty the script cache of a --url server\)$/,
  },
  {
    name: "explain's flag given to explore",
    args: ['explore', '--svg', 'x.svg'],
    line: /^emq-race: unknown option '--svg'; --svg is a flag of emq-race explain, not of explore \(emq-race help explain lists its flags\)$/,
  },
  // A number with spaces around it is refused as typed, by every numeric flag's parser, not read as
  // the number. Port 1: a value wrongly taken would end in exit 3 (connection refused), not 2.
  ...(
    [
      ['--latency', [' 2'], '" 2" is not a number of milliseconds; expected 0 to 1000 (fractions allowed, as in 0.5)'],
      ['--latency-jitter', ['0.5 ', '--latency', '1'], '"0.5 " is not a number of milliseconds; expected 0 to 1000 (fractions allowed, as in 0.5)'],
      ['--jobs', [' 5'], '" 5" is not a whole number; expected 1 to 10000000'],
      ['--sweepers', ['3 '], '"3 " is not a whole number; expected 1 to 256'],
      ['--wait-replicas', ['1 '], '"1 " is not N[:TIMEOUT_MS] with N only 1 (the drill has one replica) and TIMEOUT_MS 1–60000'],
    ] as const
  ).map(([flag, [value, ...rest], said]) => ({
    name: `${flag} ${JSON.stringify(value)}`,
    args: [flag, value, ...rest, '--url', 'redis://127.0.0.1:1'],
    line: new RegExp(`^${literal(`emq-race: ${flag}: ${said}`)}$`),
  })),
  {
    name: 'explore --sweeps " 2"',
    args: ['explore', '--sweeps', ' 2', '--url', 'redis://127.0.0.1:1'],
    line: new RegExp(`^${literal('emq-race: --sweeps: " 2" is not a whole number; expected 2 to 3')}$`),
  },
  // The grid's axis hands each item to the flag's parser as typed, as the flag itself would be read.
  ...['latency=0, 1', 'latency=0,1 '].map((axis) => ({
    name: `grid --vary ${JSON.stringify(axis)}`,
    args: ['grid', '--vary', axis, '--url', 'redis://127.0.0.1:1'],
    line: new RegExp(
      `^${literal(`emq-race: --latency: ${JSON.stringify(axis.slice('latency=0,'.length))} is not a number of milliseconds; expected 0 to 1000 (fractions allowed, as in 0.5)`)}$`,
    ),
  })),
];
for (const { name, args, line } of CLI_CASES) {
  test(`${name}: one line, exit 2, nothing started`, async () => {
    const result = await runCli(args);
    assert.equal(result.code, 2, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', line);
    // --json left standing as the flag after a value left out still asks for the error as JSON.
    if (args.includes('--json')) assert.equal((JSON.parse(result.stdout) as { error: { exit: number } }).error.exit, 2);
    else assert.equal(result.stdout, '');
    assert.doesNotMatch(result.stderr, /secret/);
  });
}

test('a TLS key that does not belong to its certificate, and a file that is no PEM: exit 2 before connecting', async () => {
  const certs = makeCerts();
  try {
    // Port 1: nothing listens there, so a connection attempt would end in exit 3, not 2.
    const mismatch = await runCli(['--url', 'rediss://127.0.0.1:1', '--tls-cert', certs.clientCert, '--tls-key', certs.serverKey]);
    assert.equal(mismatch.code, 2, mismatch.stderr);
    assert.match(oneErrorLine(mismatch.stderr) ?? '', /^emq-race: --tls-key: the key does not belong to the certificate of --tls-cert$/);
    const notPem = await runCli(['--url', 'rediss://127.0.0.1:1', '--tls-cert', certs.clientKey, '--tls-key', certs.clientKey]);
    assert.equal(notPem.code, 2, notPem.stderr);
    assert.match(oneErrorLine(notPem.stderr) ?? '', /^emq-race: --tls-cert: the file cannot be used for TLS/);
  } finally {
    // The folder holds private keys: gone as soon as the test is done with them.
    rmSync(certs.dir, { recursive: true, force: true });
  }
});

forEachServer('flags and URLs against a live server', (handle) => {
  // The handshake's wait (2 s) is idle: that run starts with the suite, the other tests run meanwhile.
  let handshake: Promise<CliResult> | undefined;
  before(() => {
    handshake = runCli(['--url', handle.url.replace('redis://', 'rediss://'), '--tls-insecure', '--jobs', '10']);
    handshake.catch(() => undefined);
  });

  test('--json before explain is honoured: one JSON object on stdout', async () => {
    const result = await runCli(['--json', '--url', handle.url, 'explain', '--mode', 'atomic']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { server: { url: string }; replays: { mode: string }[] };
    assert.equal(report.server.url, handle.url);
    assert.deepEqual(
      report.replays.map((r) => r.mode),
      ['atomic'],
    );
  });

  test('a ?db= in the query selects that database', async () => {
    const url = `${handle.url}/?db=3`;
    const result = await runCli(['--url', url, '--mode', 'atomic', '--jobs', '50', '--queue', 'race-db3', '--keep', '--json']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { server: { url: string } }).server.url, url);
    const redis = await connect(parseServerUrl(handle.url));
    try {
      assert.equal(await redis.exists('emq:{race-db3}:owner'), 0, 'written to database 0');
      await redis.select(3);
      assert.equal(await redis.exists('emq:{race-db3}:owner'), 1, 'not written to database 3');
    } finally {
      redis.disconnect();
    }
    const clean = await runCli(['clean', '--url', url, '--queue', 'race-db3']);
    assert.equal(clean.code, 0, clean.stderr);
  });

  test('rediss:// on a plain port: the unanswered handshake is named, with the hint, not "timed out"', async () => {
    const result = await (handshake ?? Promise.reject(new Error('the run was not started')));
    assert.equal(result.code, 3, result.stderr);
    assert.match(
      oneErrorLine(result.stderr) ?? '',
      /took the connection but did not answer the TLS handshake within 2 s: it may not speak TLS on this port \(for a plain port use a redis:\/\/ URL\)$/,
    );
  });
});

test('explain --mode: "both" inside a list stands for both replays; a mode explain cannot replay is named', () => {
  assert.deepEqual(parseExplainModes('both,loop'), parseExplainModes('both'));
  assert.deepEqual(parseExplainModes('atomic,both'), ['atomic', 'loop']);
  assert.deepEqual(parseExplainModes('loop'), ['loop']);
  usage(() => parseExplainModes('both,watch'), /^--mode: "watch" is a mode explain cannot replay/);
});
