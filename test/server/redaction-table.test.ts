/**
 * Redaction that holds for any input: every form a password can take in --url or REDIS_URL (the
 * user info, the query with or without an '@', a fragment, a one-slash typo, a raw space or quote,
 * a tab, a word alone, an over-long URL, and every form the earlier tests knew) run through every
 * output the tool has — stdout, stderr, the JSON report and error object, CSV, the HTML pages, the
 * SVG, `clean`, `explain`, `grid` and the progress line — and the password found nowhere. The
 * server asks for the passwords (requirepass and ACL users), so the forms that parse really run.
 * The command runs in-process through the Io seam.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { run } from '../../src/cli/program.js';
import { connect, parseServerUrl, redactUrl, scrubUrlText, SHOWN_URL_MAX } from '../../src/server/connection.js';
import { cliResult, type CliResult } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { forOneServerKind } from '../helpers/servers.js';

/** Every password here starts with Zq7 and ends with w0rd: any leak shows one end or the other. */
const NEEDLES = ['zq7', 'w0rd'];
/** The default user's password (requirepass) and racer's: every character that trips URL handling. */
const PASSWORD = 'Zq7/p@ss%w0rd';
const encoded = encodeURIComponent(PASSWORD);
/** ACL users whose passwords hold what a URL parser reads in its own way, raw in the URL. */
const USERS: readonly (readonly [string, string])[] = [
  ['racer', PASSWORD],
  ['atter', 'Zq7@at@w0rd'],
  ['spacer', 'Zq7 sp@ce w0rd'],
  ['quoter', `Zq7"q'w0rd`],
];

function assertNoSecret(what: string, ...texts: string[]): void {
  for (const text of texts) {
    const lower = text.toLowerCase();
    for (const needle of NEEDLES) assert.ok(!lower.includes(needle), `${what} shows the password (${needle}):\n${text.slice(0, 2000)}`);
  }
}

/** The CLI in-process, with a terminal on stderr so that the progress line is drawn as a person sees it. */
async function runInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(['node', 'emq-race', ...args], {
    out: (text) => (stdout += text),
    err: (text) => (stderr += text),
    env: { NO_COLOR: '1', ...env },
    stdoutIsTty: false,
    stderrIsTty: true,
    stderrColumns: 120,
  });
  return cliResult(code, null, stdout, stderr);
}

test('redactUrl: every form masked, nothing longer than the cut, the address kept where it is plain', () => {
  const cases: readonly (readonly [string, string])[] = [
    ['redis://u:Zq7w0rd@h:1/2', 'redis://u:***@h:1/2'],
    ['redis://h:1/?password=Zq7@w0rd', 'redis://***'],
    ['redis://h:1/?username=u&db=2&password=Zq7w0rd', 'redis://h:1/?username=u&db=2&password=***'],
    // After a hidden value nothing of the query shows: a password may hold an unencoded '&'.
    ['redis://h:1/?username=u&password=Zq7w0rd&db=2', 'redis://h:1/?username=u&password=***&***'],
    ['redis://h:1/?username=u&password=Zq7&w0rdTail', 'redis://h:1/?username=u&password=***&***'],
    ['redis://h:1/?password=&Zq7w0rd', 'redis://h:1/?password=***&***'],
    // A lone word in the query may be the password itself.
    ['redis://h:1/?Zq7w0rd', 'redis://h:1/?***'],
    // Only the parameters the tool reads are named: any other name may be a password typed there.
    ['redis://h:1/?token=Zq7w0rd', 'redis://h:1/?***'],
    ['redis://h:1/?Zq7w0rd=1', 'redis://h:1/?***'],
    ['redis://h:1#password=Zq7w0rd', 'redis://h:1#***'],
    ['redis:/:Zq7w0rd@h:1', 'redis:/:***@h:1'],
    ['redis://:Zq7 w0rd@h:notaport', 'redis://:***@h:notaport'],
    [`redis://:Zq7"w0rd@h:1`, 'redis://:***@h:1'],
    ['redis://Zq7w0rd@h:1', 'redis://***@h:1'],
    ['redis://:Zq7w0rd', 'redis://***'],
    ['redis://:Zq7@p@w0rd@h:1', 'redis://:***@h:1'],
    ['redis://:Zq7@p@w0rd@h:notaport', 'redis://:***@***'],
    ['Zq7w0rd', '***'],
    ['pass:Zq7w0rd', '***'],
    ['redis://h:1/?pass:Zq7w0rd', 'redis://h:1/?***'],
    ['localhost:6379', 'localhost:6379'],
    ['rediss://[::1]:6390', 'rediss://[::1]:6390'],
    ['unix:///tmp/redis.sock?password=Zq7w0rd', 'unix:///tmp/redis.sock?password=***'],
  ];
  for (const [url, shown] of cases) {
    assert.equal(redactUrl(url), shown, url);
    assertNoSecret(url, redactUrl(url));
    // The last guard over error lines reads a URL from its scheme's slash up to a space or quote.
    if (/^[a-z]+:\//.test(url) && !/[\s"']/.test(url)) assertNoSecret(`scrubUrlText ${url}`, scrubUrlText(`failed at ${url}, again`));
  }
  const long = `redis://:Zq7w0rd@127.0.0.1:notaport/${'x'.repeat(100_000)}`;
  assert.ok(redactUrl(long).length <= SHOWN_URL_MAX + 1, 'an over-long URL is cut');
  assertNoSecret('an over-long URL', redactUrl(long));
  const longQuery = `redis://127.0.0.1:1/?password=${'Zq7'.repeat(30_000)}w0rd`;
  assert.equal(redactUrl(longQuery), 'redis://127.0.0.1:1/?password=***');
});

// The subject is the redaction of text in every output, the same on either server kind: one kind for this file.
forOneServerKind(import.meta.url, 'redaction of every --url form through every output', (handle) => {
  let admin: Redis;
  let dir: string;
  let port: number;
  before(async () => {
    admin = await connect(parseServerUrl(handle.url));
    port = handle.server.port;
    for (const [user, password] of USERS) await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
    await admin.call('CONFIG', 'SET', 'requirepass', PASSWORD);
    dir = mkdtempSync(join(tmpdir(), 'emq-race-redaction-'));
  });
  after(async () => {
    admin?.disconnect();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const at = (): string => `127.0.0.1:${port}`;
  /** URLs that log in and run: each is raced, replayed, gridded and cleaned. */
  const working: readonly { name: string; url: () => string; env?: boolean }[] = [
    { name: 'user:password@, encoded', url: () => `redis://racer:${encoded}@${at()}` },
    { name: ':password@ (the default user)', url: () => `redis://:${encoded}@${at()}` },
    { name: '?password= in the query', url: () => `redis://${at()}/?password=${encoded}` },
    { name: '?username=&password= from REDIS_URL', url: () => `redis://${at()}?username=racer&password=${encoded}`, env: true },
    { name: 'user:password@ with a database', url: () => `redis://racer:${encoded}@${at()}/0` },
    { name: "?password= holding a raw '@'", url: () => `redis://${at()}/?username=atter&password=Zq7@at@w0rd` },
    { name: "a raw space and '@' in the user info's password", url: () => `redis://spacer:Zq7 sp@ce w0rd@${at()}` },
    { name: 'raw quotes in the password', url: () => `redis://quoter:Zq7"q'w0rd@${at()}` },
    { name: 'a long working URL, cut where shown', url: () => `redis://racer:${encoded}@${at()}/?${'db=0&'.repeat(60)}username=racer` },
  ];

  /** The command line with `form`'s URL, in --url between the words and the flags, or in REDIS_URL. */
  const callWith =
    (form: (typeof working)[number]) =>
    (words: string[], args: string[]): Promise<CliResult> => {
      const url = form.url();
      return form.env ? runInProcess([...words, ...args], { REDIS_URL: url }) : runInProcess([...words, '--url', url, ...args]);
    };

  // A loop pausing after each probe runs past the second after which a terminal shows progress:
  // mostly waiting, so every form's such run is started at once, each on a queue of its own, as
  // soon as the server asks for the passwords, and each form's test takes its own.
  let progressRuns: Promise<CliResult>[] = [];
  before(() => {
    progressRuns = working.map((form) => {
      const progress = callWith(form)([], ['--mode', 'loop', '--jobs', '60', '--sweepers', '1', '--probe-delay', '25']);
      progress.catch(() => undefined);
      return progress;
    });
  });

  working.forEach((form, index) => {
    test(`${form.name}: table, progress, --json, --csv, trials, --html, a refusal as JSON, explain (text, --json, --html, --svg), explore --json, grid (table, --json, --html) and clean`, async () => {
      const url = form.url();
      const call = callWith(form);
      const queue = `race-redact${index}`;
      const files = {
        race: join(dir, `race${index}.html`),
        explain: join(dir, `explain${index}.html`),
        svg: join(dir, `explain${index}.svg`),
        grid: join(dir, `grid${index}.html`),
      };
      await admin.hset(`emq:{race-taken${index}}:job:1`, 'state', 'not ours');
      const results: [string, CliResult, number][] = [
        ['table, --keep and --html', await call([], ['--mode', 'atomic', '--jobs', '100', '--queue', queue, '--keep', '--html', files.race]), 0],
        ['progress on a terminal', await (progressRuns[index] ?? Promise.reject(new Error('no progress run'))), 0],
        ['--json', await call([], ['--mode', 'atomic', '--jobs', '100', '--json']), 0],
        ['--csv', await call([], ['--mode', 'atomic', '--jobs', '100', '--csv']), 0],
        ['trials with --queues', await call([], ['--mode', 'atomic', '--jobs', '50', '--trials', '2', '--queues', '2']), 0],
        ['a refused claim as a JSON error object', await call([], ['--mode', 'atomic', '--jobs', '50', '--queue', `race-taken${index}`, '--json']), 2],
        ['explain text', await call(['explain'], ['--mode', 'atomic']), 0],
        ['explain --json, --html, --svg', await call(['explain'], ['--json', '--html', files.explain, '--svg', files.svg]), 0],
        ['explore --json', await call(['explore'], ['--mode', 'atomic', '--json']), 0],
        ['grid table and --html', await call(['grid'], ['--mode', 'atomic', '--jobs', '50', '--vary', 'sweepers=1,2', '--html', files.grid]), 0],
        ['grid --json', await call(['grid'], ['--mode', 'atomic', '--jobs', '50', '--vary', 'sweepers=1,2', '--json']), 0],
      ];
      // Every form's progress run over first: clean --all would rightly refuse a queue still live.
      await Promise.allSettled(progressRuns);
      results.push(['clean --all', await call(['clean'], ['--all', '--yes']), 0], ['clean with nothing left', await call(['clean'], ['--all', '--yes']), 0]);
      await admin.unlink(`emq:{race-taken${index}}:job:1`);
      for (const [what, result, code] of results) {
        assert.equal(result.code, code, `${what}: ${result.stderr}${result.stdout}`);
        assertNoSecret(what, result.stdout, result.stderr, ...result.progress);
      }
      for (const file of Object.values(files)) assertNoSecret(file, readFileSync(file, 'utf8'));
      // The outputs were made, and name the server by its redacted URL.
      const [kept, progress, json, , , refused] = results.map(([, result]) => result);
      assert.match(kept?.stdout ?? '', new RegExp(`kept: queue ${queue}`));
      assert.match(progress?.stderr ?? '', /loop: \d+\/60 leases reclaimed/, 'a progress line was drawn');
      const server = (JSON.parse(json?.stdout ?? '{}') as { server: { url: string } }).server.url;
      assert.ok(server.length <= SHOWN_URL_MAX + 1, server);
      assert.equal(server, redactUrl(url));
      assert.match((JSON.parse(refused?.stdout ?? '{}') as { error: { message: string } }).error.message, /race-taken/);
      assert.match(results.find(([what]) => what === 'clean --all')?.[1].stdout ?? '', new RegExp(`removed queue ${queue}`));
      assert.match(readFileSync(files.race, 'utf8'), /--url|REDIS_URL/);
      // A password shown as *** in a page's line to run it again: each page says to put it back.
      if (!form.env && /\*\*\*/.test(redactUrl(url)))
        for (const page of [files.race, files.explain, files.grid])
          assert.match(readFileSync(page, 'utf8'), /the password the page shows as <code>\*\*\*<\/code> put back/, page);
    });
  });

  /** URLs that fail, each through the main command, explain, grid and clean, plain and as JSON. */
  const failing: readonly { name: string; url: () => string; code: number; line: RegExp; env?: boolean }[] = [
    {
      name: 'the one-slash typo redis:/:PASSWORD@',
      url: () => `redis:/:Zq7w0rd@${at()}`,
      code: 2,
      line: /mistypes the scheme; did you mean redis:\/\/:\*\*\*@/,
    },
    {
      name: 'a raw space in the password of a URL that does not parse',
      url: () => `redis://:Zq7 sp ace w0rd@127.0.0.1:notaport`,
      code: 2,
      line: /is not a URL/,
    },
    { name: 'a raw quote in the password of a URL that does not parse', url: () => `redis://:Zq7"q'w0rd@127.0.0.1:notaport`, code: 2, line: /is not a URL/ },
    {
      name: 'a fragment #password= on a URL that does not parse',
      url: () => `redis://127.0.0.1:notaport#password=Zq7w0rd`,
      code: 2,
      line: /has a port that is not a number/,
    },
    // A '#' cuts a URL short unread: refused, the fragment not shown.
    {
      name: 'a fragment #password= beside a working password',
      url: () => `redis://racer:${encoded}@${at()}#password=Zq7-fragment-w0rd`,
      code: 2,
      line: /has a '#', and a URL's parser drops it and all that follows/,
    },
    { name: 'a bare word where the URL goes', url: () => 'Zq7w0rd', code: 2, line: /the value given \(not shown: it may be a password\) is not a URL/ },
    { name: 'a word and a colon, read as a scheme', url: () => 'Zq7:w0rd', code: 2, line: /has a scheme that is not supported/ },
    { name: 'a 100 KB URL', url: () => `redis://:Zq7w0rd@127.0.0.1:notaport/${'Zq7w0rd'.repeat(15_000)}`, code: 2, line: /is not a URL/ },
    { name: 'a tab in the password (a parser would drop it)', url: () => `redis://:Zq7\tw0rd@${at()}`, code: 2, line: /contains a tab/ },
    {
      name: 'a query parameter named with the password',
      url: () => `redis://${at()}/?pass:Zq7w0rd`,
      code: 2,
      line: /a query parameter in .* is not supported/,
    },
    { name: "a raw '/' and '@' in the password", url: () => `redis://:${PASSWORD}@${at()}`, code: 2, line: /is not a URL/ },
    { name: 'a backslash', url: () => `redis://:Zq7\\w0rd@${at()}`, code: 2, line: /contains a backslash/ },
    { name: "a '%' that starts no escape", url: () => `redis://:Zq7%zzw0rd@${at()}`, code: 2, line: /percent-escape/ },
    { name: 'a database that is no number', url: () => `redis://:Zq7w0rd@${at()}/?db=abc`, code: 2, line: /must be a number/ },
    { name: 'a database the server does not have', url: () => `redis://racer:${encoded}@${at()}/16`, code: 2, line: /has no database 16/ },
    {
      name: 'an unsupported parameter beside ?password=',
      url: () => `redis://${at()}/?password=Zq7w0rd&keyPrefix=x`,
      code: 2,
      // Not named: after the password, it may be the password's own tail.
      line: /a query parameter in "redis:\/\/127\.0\.0\.1:\d+\/\?password=\*\*\*&\*\*\*" is not supported/,
    },
    {
      name: "a password with an unencoded '&', its tail read as a parameter",
      url: () => `redis://${at()}/?username=racer&password=Zq7&w0rdTail`,
      code: 2,
      line: /a query parameter in .* is not supported/,
    },
    {
      name: 'an unsupported parameter before ?password=',
      url: () => `redis://${at()}/?keyPrefix=x&password=Zq7w0rd`,
      code: 2,
      line: /a query parameter in "redis:\/\/127\.0\.0\.1:\d+\/\?\*\*\*&\*\*\*" is not supported/,
    },
    { name: 'a wrong password', url: () => `redis://racer:Zq7-wrong-w0rd@${at()}`, code: 3, line: /refused the credentials/ },
    // Past what V8 takes as a regular expression: the search for the password in the server's words
    // once made one of it, failed, and printed it whole as "a bug". No server lets it log in.
    {
      name: 'a 40 KB password, longer than a server takes before a login',
      url: () => `redis://:Zq7${'x'.repeat(40_000)}w0rd@${at()}`,
      code: 3,
      line: /closed the connection while connecting: the URL's password is 40,007 bytes, and Redis and Valkey close the connection of a client not yet logged in that sends more than 16,384 bytes in one argument$/,
    },
    { name: "a wrong ?password= holding an '@'", url: () => `redis://${at()}/?password=Zq7@wrong@w0rd`, code: 3, line: /refused the credentials/ },
    { name: 'the password as a lone user name', url: () => `redis://Zq7w0rd@${at()}`, code: 3, line: /requires a password|refused the credentials/ },
    { name: 'an unreachable port, from REDIS_URL', url: () => 'redis://:Zq7w0rd@127.0.0.1:1', code: 3, line: /cannot reach/, env: true },
  ];

  for (const form of failing) {
    test(`${form.name}: exit ${form.code}, one line, and no password in the race, explain, explore, grid or clean, plain or JSON`, async () => {
      const url = form.url();
      // Each command's words, then its flags: --url goes between them (or REDIS_URL carries it).
      const commands: [string[], string[]][] = [
        [[], ['--jobs', '50']],
        [[], ['--jobs', '50', '--json']],
        [['explain'], ['--json']],
        [['explore'], ['--json']],
        [['grid'], ['--vary', 'sweepers=1,2', '--jobs', '50', '--json']],
        [['clean'], ['--all', '--yes']],
      ];
      for (const [words, flags] of commands) {
        const args = [...words, ...flags];
        const result = await (form.env ? runInProcess(args, { REDIS_URL: url }) : runInProcess([...words, '--url', url, ...flags]));
        const what = `${args.join(' ')}`;
        assert.equal(result.code, form.code, `${what}: ${result.stderr}`);
        const line = oneErrorLine(result.stderr);
        assert.ok(line, `${what}: one line, got ${result.stderr}`);
        assert.match(line, form.line, what);
        assert.ok(line.length < 600, `${what}: the line is ${line.length} characters`);
        if (args.includes('--json')) assert.match((JSON.parse(result.stdout) as { error: { message: string } }).error.message, form.line, what);
        assertNoSecret(`${form.name}, ${what}`, result.stdout, result.stderr);
      }
    });
  }

  test('a URL given where a command goes: its password is not echoed', async () => {
    const result = await runInProcess([`redis://:Zq7w0rd@${at()}`]);
    assert.equal(result.code, 2);
    assert.match(oneErrorLine(result.stderr) ?? '', /^emq-race: "redis:\/\/:\*\*\*@127\.0\.0\.1:\d+" is not a command: a server URL goes after --url$/);
    assertNoSecret('the URL as a command', result.stdout, result.stderr);
  });

  test("a file named like a URL with its password (in a folder 'redis:'): the pages and the exported test name it scrubbed", async () => {
    const url = `redis://:${encoded}@${at()}`;
    const named = (file: string): string => join(dir, `redis://:Zq7file${file}w0rd@h:1`);
    mkdirSync(join(dir, 'redis:'), { recursive: true });
    const written = {
      race: named('race'),
      explain: named('explain'),
      svg: named('svg'),
      explore: named('explore'),
      test: named('test'),
    };
    const runs: (readonly [string, CliResult])[] = [
      ['the race', await runInProcess(['--url', url, '--mode', 'atomic', '--jobs', '50', '--html', written.race])],
      ['explain', await runInProcess(['explain', '--url', url, '--html', written.explain, '--svg', written.svg])],
      ['explore', await runInProcess(['explore', '--mode', 'loop', '--html', written.explore])],
      ['--export-test', await runInProcess(['--url', url, '--mode', 'loop', '--jobs', '30', '--seed', '3', '--export-test', written.test])],
    ];
    for (const [what, result] of runs) {
      assert.equal(result.code, 0, `${what}: ${result.stderr}`);
      assertNoSecret(what, result.stdout, result.stderr);
    }
    for (const [what, path] of Object.entries(written)) {
      const text = readFileSync(path, 'utf8');
      // A path may come back resolved, its '//' made one '/': either way the password is masked.
      // The SVG, a drawing alone, names no command.
      if (what !== 'svg') assert.match(text, /redis:\/\/?:\*\*\*@h:1/, `${what}: the file does not name itself, scrubbed`);
      assertNoSecret(`the ${what} file`, text);
    }
  });
});

/**
 * A password typed where another flag's value goes, or joined to a flag the tool does not have
 * (`--password=`, redis-cli's `-a`): the usage error names the flag and what it takes, not the
 * value. No server is needed: each is refused before any connection.
 */
test('a password given to the wrong flag, or to one the tool does not have, is not printed back', async () => {
  const secret = 'Zq7Secret9w0rd';
  const url = `redis://:${secret}@127.0.0.1:7000`;
  const cases: readonly (readonly [readonly string[], RegExp])[] = [
    [[`--password=${secret}`], /^emq-race: unknown option '--password'$/],
    [[`--pass=${secret}'x`], /^emq-race: unknown option '--pass'/],
    [[`-a${secret}`], /^emq-race: unknown option '-a'$/],
    [[`--urll=${url}`], /^emq-race: unknown option '--urll'/],
    [['--jobs', secret], /^emq-race: --jobs: the value given \(not shown: it may be a password\) is not a whole number; expected 1 to /],
    [['--jobs', url], /^emq-race: --jobs: the value given \(not shown/],
    [['--latency', secret], /^emq-race: --latency: the value given \(not shown/],
    [['--mode', secret], /^emq-race: --mode: the value given \(not shown: it may be a password\) is not a mode; expected one of atomic/],
    [['--pending', secret], /^emq-race: --pending: the value given \(not shown/],
    [['--fault', secret], /^emq-race: --fault: the value given \(not shown/],
    [['--lib', secret], /^emq-race: --lib: the value given \(not shown/],
    [['--expect', `atomic=${secret}`], /^emq-race: --expect: the value given \(not shown/],
    [['--queue', `${secret}{x}`], /^emq-race: --queue: a queue name may not hold '\{', '\}'; use 1 to 100 letters/],
    [['--queue', `-${secret}`], /^emq-race: --queue: the value given \(not shown/],
    [['--url', `${secret}://127.0.0.1:7000`], /^emq-race: --url: the value given \(not shown: it may be a password\) has a scheme that is not supported/],
    [
      ['explain', '--schedule', `A:detect,${secret}:probe`],
      /^emq-race: --schedule: item 2 of 2, the value given \(not shown: it may be a password\), names another sweep/,
    ],
    [['explain', '--counter', secret], /^emq-race: --counter: the value given \(not shown/],
    [['grid', '--vary', secret], /^emq-race: --vary: the value given \(not shown/],
    [['grid', '--vary', `sweepers=1,${secret}`], /^emq-race: --sweepers: the value given \(not shown/],
  ];
  for (const [args, line] of cases) {
    for (const json of [false, true]) {
      const what = [...args, ...(json ? ['--json'] : [])].join(' ');
      const result = await runInProcess(json ? [...args, '--json'] : args);
      assert.equal(result.code, 2, `${what}: ${result.stderr}`);
      assert.match(oneErrorLine(result.stderr) ?? '', line, what);
      if (json) assert.match(`emq-race: ${(JSON.parse(result.stdout) as { error: { message: string } }).error.message}`, line, what);
      assertNoSecret(what, result.stdout, result.stderr);
    }
  }
  // A mistyped value of the flag's own kind is still repeated, so the user sees the typo.
  const typo = await runInProcess(['--mode', 'atomc']);
  assert.match(oneErrorLine(typo.stderr) ?? '', /^emq-race: --mode: "atomc" is not a mode/);
  const scheme = await runInProcess(['--url', 'HTTP://127.0.0.1:7000']);
  assert.match(oneErrorLine(scheme.stderr) ?? '', /^emq-race: --url: scheme "http" is not supported/);
});
