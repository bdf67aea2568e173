/**
 * The pure pieces behind the safety checks: owner markers, TLS flag rules, error lines, a wait
 * that tells a frozen process from a silent server (memory arithmetic: memory-units.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { awakeTimeout } from '../../src/server/frozen.js';
import { redactUrl } from '../../src/server/connection.js';
import {
  busyAdviceGiven,
  CodeBugError,
  describeServerError,
  ExitCode,
  packageRaising,
  raisedReadingReplies,
  UnlikeRedisReply,
} from '../../src/shared/errors.js';
import { bugReport } from '../../src/cli/program.js';
import { keysLeftHint } from '../../src/queue/cleanup.js';
import { rememberSecret, withoutSecrets } from '../../src/shared/secrets.js';
import { newOwnerMarker, ownerValue, parseOwnerValue } from '../../src/queue/owner-marker.js';
import { tlsSettings } from '../../src/server/tls.js';

test('owner markers: what a run writes is recognised; anything else is not the tool’s', () => {
  const marker = newOwnerMarker('0123456789abcdef', 2000);
  assert.deepEqual(parseOwnerValue(ownerValue(marker)), marker);
  assert.equal(parseOwnerValue(null), undefined);
  assert.equal(parseOwnerValue('0123456789abcdef'), undefined);
  assert.equal(parseOwnerValue('worker-7'), undefined);
  assert.equal(parseOwnerValue('{"tool":"other","run":"x","jobs":1}'), undefined);
  assert.equal(parseOwnerValue('{"tool":"emq-race","run":"x","jobs":-1}'), undefined);
  assert.equal(parseOwnerValue('{"tool":"emq-race","run":"x","jobs":1.5}'), undefined);
  // More jobs than any run seeds: clean would walk a trillion ids (and run out of memory) on its word.
  assert.equal(parseOwnerValue('{"tool":"emq-race","run":"x","jobs":1000000000000}'), undefined);
  assert.equal(parseOwnerValue('{"tool":"emq-race","run":"x","jobs":20000000}')?.jobs, 20_000_000);
  assert.equal(parseOwnerValue('{"tool":"emq-race",'), undefined);
  // A GET no Redis answers (an integer, a list): the peer's reply named, not a marker misread.
  for (const reply of [1, ['{}'], Buffer.from('{}')])
    assert.throws(
      () => parseOwnerValue(reply),
      (err: unknown) => err instanceof UnlikeRedisReply && err.message === 'GET: is neither a string nor nil',
    );
  // A start past what a Date holds reads as unknown (0): shown as a date, it would throw.
  for (const started of ['1e300', '-1e300', '8640000000000001'])
    assert.equal(parseOwnerValue(`{"tool":"emq-race","run":"x","jobs":1,"started":${started}}`)?.started, 0, started);
  assert.equal(parseOwnerValue('{"tool":"emq-race","run":"x","jobs":1,"started":1764806400000}')?.started, 1_764_806_400_000);
});

test('TLS flags: only with rediss://, certificate and key together, explicit insecure', () => {
  assert.equal(tlsSettings('redis://h:1', {}), undefined);
  assert.throws(() => tlsSettings('redis://h:1', { tlsInsecure: true }), /--tls-insecure: only applies to a rediss:\/\/ --url/);
  assert.throws(() => tlsSettings('rediss://h:1', { tlsKey: '/etc/hostname' }), /--tls-key: needs --tls-cert/);
  assert.deepEqual(tlsSettings('rediss://h:1', {}), { rejectUnauthorized: true });
  assert.deepEqual(tlsSettings('rediss://h:1', { tlsInsecure: true }), { rejectUnauthorized: false });
});

test('redactUrl hides the password, also in a URL that does not parse', () => {
  assert.equal(redactUrl('redis://u:pw@h:6379/2'), 'redis://u:***@h:6379/2');
  assert.equal(redactUrl('redis://u:pw@h:notaport'), 'redis://u:***@h:notaport');
});

test('describeServerError: a command the server does not know (renamed or disabled) is named, its echoed arguments left out; maxclients in words', () => {
  const unknown = new Error(`ERR unknown command 'evalsha', with args beginning with: 'fc5c' '2' 'emq:{q}:owner' '{"tool"' `);
  const line = describeServerError(unknown, 'redis://h:1');
  assert.equal(line.exitCode, ExitCode.server);
  assert.equal(
    line.message,
    'the server at redis://h:1 does not know the command EVALSHA (renamed or disabled in its configuration, as some hosted services do, or a server too old for it): the tool needs it; see "Least privilege" in docs/shared-servers.md for every command the tool sends',
  );
  const full = describeServerError(new Error('ERR max number of clients reached'), 'redis://h:1');
  assert.match(
    full.message,
    /^the server at redis:\/\/h:1 refused a connection: it already holds as many clients as its maxclients setting allows; .*fewer --sweepers/,
  );
});

test('describeServerError: a transaction whose MULTI the server does not know names MULTI, not the EXEC that followed', () => {
  // ioredis's error for the EXEC, with MULTI's own reply among the transaction's earlier errors.
  const multi = Object.assign(new Error("ERR unknown command 'multi', with args beginning with: "), { command: { name: 'multi', args: [] } });
  const exec = Object.assign(new Error('ERR EXEC without MULTI'), { previousErrors: [multi] });
  assert.match(describeServerError(exec, 'redis://h:1').message, /^the server at redis:\/\/h:1 does not know the command MULTI \(renamed or disabled/);
  // Without that record it stays the server's words.
  assert.match(describeServerError(new Error('ERR EXEC without MULTI'), 'redis://h:1').message, /^server error from redis:\/\/h:1: ERR EXEC without MULTI$/);
});

test('describeServerError: a key refused names the queue whose keys the user may not read or write as the command needs; a command refused does not', () => {
  for (const words of ['this user has no permissions to access one of the keys used as arguments', 'No permissions to access a key']) {
    const get = Object.assign(new Error(`NOPERM ${words}`), { command: { name: 'get', args: ['emq:{nightly2}:owner'] } });
    assert.equal(
      describeServerError(get, 'redis://u:***@h:1').message,
      `permission denied on redis://u:***@h:1 (GET): this user may not read or write the keys of queue nightly2 (emq:{nightly2}:*) as GET needs (${words}): its ACL key patterns leave them out, or let it only read them (%R~) or only write them (%W~); give it a key pattern that covers them for both: a --queue name outside race-* needs one, e.g. ~emq:{NAME*}:* for every queue the command makes from NAME; see "Least privilege" in docs/shared-servers.md`,
    );
    // A script call's keys are its declared KEYS, after the script and their number.
    const evalsha = Object.assign(new Error(`NOPERM ${words}`), {
      command: { name: 'evalsha', args: ['ab'.repeat(20), '2', 'emq:{q7}:owner', 'emq:{q7}:heartbeat', 'emq:{x}:y'] },
    });
    assert.match(
      describeServerError(evalsha, 'redis://h:1').message,
      /\(EVALSHA\): this user may not read or write the keys of queue q7 \(emq:\{q7\}:\*\) as EVALSHA needs/,
    );
  }
  // A command refused, or a key that is not the tool's: as before.
  const command = Object.assign(new Error("NOPERM this user has no permissions to run the 'get' command"), {
    command: { name: 'get', args: ['emq:{q}:owner'] },
  });
  assert.doesNotMatch(describeServerError(command, 'redis://h:1').message, /key patterns/);
  const other = Object.assign(new Error('NOPERM No permissions to access a key'), { command: { name: 'get', args: ['other'] } });
  assert.match(
    describeServerError(other, 'redis://h:1').message,
    /^permission denied on redis:\/\/h:1 \(GET\): No permissions to access a key; see "Least privilege"/,
  );
});

test('describeServerError: NOPERM names the refused command; TLS failures say what to pass', () => {
  const noperm = Object.assign(new Error('NOPERM this user has no permissions to access one of the keys used as arguments'), { command: { name: 'set' } });
  const line = describeServerError(noperm, 'redis://u:***@h:1');
  assert.equal(line.exitCode, ExitCode.server);
  assert.match(line.message, /^permission denied on redis:\/\/u:\*\*\*@h:1 \(SET\): this user has no permissions/);
  const untrusted = Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
  assert.match(describeServerError(untrusted, 'rediss://h:1').message, /not signed by a trusted CA .*--tls-ca/);
  assert.match(describeServerError(new Error('Command aborted due to connection close'), 'x').message, /^lost the connection/);
  const busy = describeServerError(new Error('BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.'), 'redis://h:1');
  assert.equal(busy.exitCode, ExitCode.server);
  assert.match(busy.message, /^the server at redis:\/\/h:1 is busy running a script past its busy-reply-threshold \(BUSY\): .*SCRIPT KILL/);
  // The keys left behind, said after that line: how to free the server is not said twice.
  const after = `${busy.message}; ${keysLeftHint('q', busy, busyAdviceGiven(busy))}`;
  assert.equal(after.match(/SCRIPT KILL/g)?.length, 1, after);
  assert.match(after, /; once it answers again, the keys of queue q \(emq:\{q\}:\*\) may remain on the server: remove them with emq-race clean --queue q/);
  // Said alone (no line of its own said it), it does tell how.
  assert.match(keysLeftHint('q', busy), /SCRIPT KILL.*; once it answers again, the keys of queue q/);
  // A user the ACL refused the deletion would be refused the clean as well: the line asks for another.
  const refused = new Error("NOPERM this user has no permissions to run the 'unlink' command");
  assert.match(
    keysLeftHint('q', refused),
    /remove them with emq-race clean --queue q \(the same server, as a user its ACL lets delete them: this one may not\); if it finds/,
  );
  // A server whose UNLINK went (a replica promoted with another configuration): clean deletes with
  // UNLINK too, so the line names the renamed command or DEL instead.
  assert.match(
    keysLeftHint('q', new Error("ERR unknown command 'UNLINK', with args beginning with: 'emq:{q}:pending'")),
    /emq-race clean deletes with UNLINK too: remove them with the command this server renamed UNLINK to, or with DEL$/,
  );
  // A port that answers in something other than RESP (an HTTP server): said as such, not in the client's words.
  const http = describeServerError(new Error('Protocol error, got "H" as reply type byte. Please report this.'), 'redis://h:1');
  assert.equal(http.exitCode, ExitCode.server);
  assert.equal(http.message, 'the server at redis://h:1 does not speak the Redis protocol: is it a Redis or Valkey port (or one that wants a rediss:// URL)?');
});

/** Stands the whole process still for `ms`, as SIGSTOP does: no timer runs and nothing is read meanwhile. */
const standStill = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Resolves once `done` holds; rejects after `ms` (a guard against a hang, not a timing). */
async function eventually(ms: number, what: string, done: () => boolean): Promise<void> {
  for (const start = Date.now(); !done(); await sleep(5)) if (Date.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`);
}

test('an awake wait: it fires once its time has passed with the process awake, and not on time the process stood still', async () => {
  let fired = 0;
  let timer: NodeJS.Timeout | undefined;
  awakeTimeout(
    30,
    () => fired++,
    (t) => (timer = t),
    100,
  );
  await eventually(5000, 'a wait with the process awake', () => fired === 1);

  // The process stands still for longer than the whole wait: the step that comes due late starts
  // the wait again instead of firing.
  fired = 0;
  let steps = 0;
  awakeTimeout(
    30,
    () => fired++,
    (t) => {
      steps++;
      timer = t;
    },
    100,
  );
  standStill(300);
  // A 1 ms timer armed now runs after the overdue step (due sooner), so this looks right after it.
  await sleep(1);
  assert.equal(fired, 0, 'a wait the process slept through has not fired');
  assert.equal(steps, 2, 'the wait was armed again');
  await eventually(5000, 'the wait armed again', () => fired === 1);

  // The timer handed to `hold` is the one to clear, whichever step is running.
  fired = 0;
  awakeTimeout(
    30,
    () => fired++,
    (t) => (timer = t),
    100,
  );
  clearTimeout(timer);
  await sleep(60);
  assert.equal(fired, 0, 'a cleared wait never fires');
});

test("describeServerError: WRONGTYPE says a key of the run's was written as another type, naming it only when it is the tool's", () => {
  const wrong = Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), {
    command: { name: 'rpush', args: ['emq:{q}:pending', '7'] },
  });
  assert.equal(
    describeServerError(wrong, 'redis://h:1').message,
    "the server at redis://h:1 holds a key of the run's as another type than the run wrote (WRONGTYPE) (RPUSH emq:{q}:pending): another client, or a --script, wrote it as something else",
  );
  const elsewhere = Object.assign(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'), {
    command: { name: 'get', args: ['app:secret'] },
  });
  assert.equal(
    describeServerError(elsewhere, 'redis://h:1').message,
    'the server at redis://h:1 answered WRONGTYPE: a key holds another type than the command expects',
  );
});

test("an error JavaScript raised in the tool's own code is a bug, never the server's words", () => {
  rememberSecret('hunter2x');
  for (const raised of [new TypeError('value.startsWith is not a function'), new RangeError('Invalid array length hunter2x')]) {
    const said = describeServerError(raised, 'redis://h:1');
    assert.ok(said instanceof CodeBugError);
    assert.equal(said.bug, raised, 'the error itself kept, for its stack');
    assert.equal(said.exitCode, ExitCode.server);
    assert.equal(said.message, `unexpected error (a bug; please report it): ${raised.message.replace('hunter2x', '***')}`);
  }
  // A reply of no Redis's shape is still said as the peer's, naming the command.
  assert.equal(
    describeServerError(new UnlikeRedisReply('GET', 'is neither a string nor nil'), 'redis://h:1').message,
    'the server at redis://h:1 does not speak the Redis protocol (its reply to GET is neither a string nor nil): is it a Redis or Valkey port (or one that wants a rediss:// URL)?',
  );
});

/** A TypeError whose stack's frames are `frames`, as V8 writes them. */
function raisedAt(frames: string | readonly string[], message = 'reply.startsWith is not a function'): TypeError {
  const err = new TypeError(message);
  const lines = (typeof frames === 'string' ? [frames] : frames).map((frame) => `    at ${frame}`);
  err.stack = [`TypeError: ${message}`, ...lines, '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)'].join('\n');
  return err;
}

test("a TypeError raised inside a package the tool drives is that package's, one line; the tool's own code and its own dependencies' stay a bug", () => {
  const raisedIn = (frames: string | readonly string[], root = '/opt/tool/'): string | undefined => packageRaising(raisedAt(frames), root);
  assert.equal(raisedIn('Worker.moveStalledJobsToWait (/p/node_modules/bullmq/dist/cjs/classes/worker.js:996:9)'), 'bullmq');
  assert.equal(raisedIn('file:///p/node_modules/@scope/lib/index.js:1:1'), '@scope/lib');
  assert.equal(raisedIn('x (file:///p/node_modules/bee%20queue/index.js:1:1)'), 'bee queue');
  assert.equal(raisedIn('async x (C:\\p\\node_modules\\bee-queue\\lib\\queue.js:5:5)'), 'bee-queue');
  // The innermost package of a nested install is the one whose code ran.
  assert.equal(raisedIn('x (/p/node_modules/bullmq/node_modules/msgpackr/dist/index.js:5:5)'), 'msgpackr');
  // Node's own frames first (a Buffer, JSON.parse, a URL): the first file's package is the one that called them.
  assert.equal(raisedIn(['Function.from (node:buffer:324:9)', 'JSON.parse (<anonymous>)', 'q (/p/node_modules/fakelib/q.js:3:3)']), 'fakelib');
  // The tool's own code: in a checkout, installed globally, under another name (a fork, an npm alias).
  assert.equal(raisedIn('claimQueue (/home/u/emq-race/dist/src/queue/owner-claim.js:9:9)'), undefined);
  assert.equal(raisedIn('c (/usr/lib/node_modules/emq-race/dist/src/queue/owner-claim.js:9:9)', '/usr/lib/node_modules/emq-race/'), undefined);
  assert.equal(raisedIn('c (/x/node_modules/race-fork/dist/src/boom.js:1:1)', '/x/node_modules/race-fork/'), undefined);
  // The tool's own dependencies, in its folder or hoisted beside it: a TypeError there is the tool's misuse of them.
  assert.equal(raisedIn('Command.checkFlag (/p/node_modules/ioredis/built/Command.js:76:35)'), undefined);
  assert.equal(raisedIn('c (/opt/tool/node_modules/commander/lib/command.js:1:1)'), undefined);
  // Node's frames alone, or a file lying loose in node_modules: nobody's package.
  assert.equal(raisedIn('Buffer.toString (node:buffer:836:11)'), undefined);
  assert.equal(raisedIn('/p/node_modules/w.js:1:1'), undefined);

  rememberSecret('hunter3y');
  const said = describeServerError(
    raisedAt('Worker.moveStalledJobsToWait (/p/node_modules/bullmq/dist/cjs/classes/worker.js:996:9)', 'bad hunter3y'),
    'redis://h:1',
  );
  assert.ok(!(said instanceof CodeBugError));
  assert.equal(said.exitCode, ExitCode.server);
  assert.equal(said.message, 'bullmq raised TypeError while speaking to the server at redis://h:1: bad ***');
});

test("an exception past every caller is the peer's only when the client raised it reading replies; the tool's own code called from there stays a bug", () => {
  // As ioredis 5 throws on a nil no command asked for, inside its socket's data handler.
  const client = [
    'DataHandler.shiftCommand (/p/node_modules/ioredis/built/DataHandler.js:183:45)',
    'DataHandler.returnReply (/p/node_modules/ioredis/built/DataHandler.js:57:27)',
    'JavascriptRedisParser.returnReply (/p/node_modules/ioredis/built/DataHandler.js:21:22)',
    'JavascriptRedisParser.execute (/p/node_modules/redis-parser/lib/parser.js:544:14)',
    'Socket.<anonymous> (/p/node_modules/ioredis/built/DataHandler.js:26:20)',
    'Socket.emit (node:events:536:35)',
  ];
  assert.ok(raisedReadingReplies(raisedAt(client, "Cannot read properties of null (reading 'toString')")));
  // The parser's own throw, under the client's handler; a copy nested in a queue library's install.
  assert.ok(raisedReadingReplies(raisedAt(client.slice(3))));
  assert.ok(raisedReadingReplies(raisedAt(client.map((frame) => frame.replace('/p/node_modules/', '/p/node_modules/bullmq/node_modules/')))));
  // The tool's listener, which the client called from its reply handling: the tool's code on top.
  assert.ok(!raisedReadingReplies(raisedAt(['onMessage (/x/dist/src/race/progress.js:9:9)', ...client.slice(1)])));
  // ioredis elsewhere than its reading of replies (a command built from a bad argument), and no stack of the client's at all.
  assert.ok(!raisedReadingReplies(raisedAt('Command.checkFlag (/p/node_modules/ioredis/built/Command.js:76:35)')));
  assert.ok(!raisedReadingReplies(raisedAt('Immediate.<anonymous> (/x/dist/src/cli/program.js:1:1)')));
  assert.ok(!raisedReadingReplies('a string thrown'));
  // What the client says of a reply other than nil that no command asked for.
  const said = describeServerError(new Error('Command queue state error. If you can reproduce this, please report it. Last reply: OK'), 'redis://h:1');
  assert.equal(said.exitCode, ExitCode.server);
  assert.match(said.message, /^the server at redis:\/\/h:1 does not speak the Redis protocol: it sent a reply no command asked for \(/);
});

test('a bug met mid-run: its stack, then on a line of its own what the run left behind, which the JSON message keeps too', () => {
  rememberSecret('hunter4z');
  const err = describeServerError(raisedAt('claimQueue (/x/dist/src/queue/owner-claim.js:9:9)', 'x.startsWith is not a function hunter4z'), 'redis://h:1');
  assert.ok(err instanceof CodeBugError);
  // What claimed-run.ts and session.ts add on the way out of a --keep run.
  err.message += '; the keys of queue q1 are kept (--keep): remove them with emq-race clean --queue q1 --url redis://h:1';
  err.message += '; kept: embedded server at redis://127.0.0.1:5, pid 7';
  const report = bugReport(err.bug, err.added);
  assert.deepEqual(report.stderr.split('\n'), [
    'emq-race: unexpected error (a bug; please report it):',
    'TypeError: x.startsWith is not a function ***',
    '    at claimQueue (/x/dist/src/queue/owner-claim.js:9:9)',
    '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    'emq-race: the keys of queue q1 are kept (--keep): remove them with emq-race clean --queue q1 --url redis://h:1; kept: embedded server at redis://127.0.0.1:5, pid 7',
    '',
  ]);
  assert.equal(
    report.message,
    'unexpected error (a bug; please report it): x.startsWith is not a function ***; the keys of queue q1 are kept (--keep): remove them with emq-race clean --queue q1 --url redis://h:1; kept: embedded server at redis://127.0.0.1:5, pid 7',
  );
  // Nothing added: the stack is the last line.
  const plain = bugReport(new TypeError('y'));
  assert.match(plain.stderr, /^emq-race: unexpected error \(a bug; please report it\):\nTypeError: y\n[\s\S]*\n$/);
  assert.doesNotMatch(plain.stderr, /\nemq-race: [^\n]*\n$/);
});

test('CLUSTERDOWN is said as a cluster that is down, with where to look', () => {
  const down = describeServerError(new Error('CLUSTERDOWN The cluster is down'), 'redis://h:7001');
  assert.equal(down.exitCode, ExitCode.server);
  assert.match(down.message, /^the cluster that redis:\/\/h:7001 belongs to is down \(CLUSTERDOWN\): .*cluster_state/);
});

test("MOVED, ASK and TRYAGAIN are said as the queue's slot moving under the run, never as the raw reply", () => {
  const moved = describeServerError(new Error('MOVED 13513 127.0.0.1:7000'), 'redis://h:7002');
  assert.equal(moved.exitCode, ExitCode.server);
  assert.match(
    moved.message,
    /^the queue's slot 13513 moved to 127\.0\.0\.1:7000 during the run \(MOVED from redis:\/\/h:7002: the cluster was resharded\): the run stops/,
  );
  const ask = describeServerError(new Error('ASK 13513 127.0.0.1:7000'), 'redis://h:7002');
  assert.match(
    ask.message,
    /^the queue's slot 13513 began moving from redis:\/\/h:7002 to 127\.0\.0\.1:7000 during the run \(ASK: the cluster is being resharded\): the run stops/,
  );
  const again = describeServerError(new Error('TRYAGAIN Multiple keys request during rehashing of slot'), 'redis://h:7002');
  assert.match(again.message, /^the queue's slot began moving off redis:\/\/h:7002 during the run \(TRYAGAIN: /);
  for (const line of [moved, ask, again].map((err) => err.message)) assert.doesNotMatch(line, /server error|^(ASK|MOVED|TRYAGAIN) /);
  // Only a redirection's exact form: a longer text that begins alike is the server's own words.
  assert.match(describeServerError(new Error('MOVED it elsewhere'), 'redis://h:1').message, /^server error from redis:\/\/h:1: MOVED it elsewhere$/);
});

test("a server's words that repeat AUTH's arguments never show the password; the tool's own words stay whatever the password", () => {
  // Redis 4 to 6 with AUTH renamed away: the command is named, its arguments are not, however short the password.
  const six = describeServerError(new Error('ERR unknown command `auth`, with args beginning with: `bob`, `pw1`, '), 'redis://bob:***@h:1');
  assert.equal(six.exitCode, ExitCode.server);
  assert.match(six.message, /^the server at redis:\/\/bob:\*\*\*@h:1 does not know the command AUTH /);
  assert.doesNotMatch(six.message, /pw1/);
  const other = describeServerError(new Error('ERR no such thing, with args beginning with: `bob`, `pw1`, '), 'redis://h:1');
  assert.equal(other.message, 'server error from redis://h:1: ERR no such thing');
  // A password that is also a word of the tool's lines: hidden in the server's words only.
  rememberSecret('server');
  const echoed = describeServerError(new Error('ERR invalid password bob server'), 'redis://h:1');
  assert.equal(echoed.message, 'server error from redis://h:1: ERR invalid password bob ***');
});

test('withoutSecrets: a password hidden wherever it stands as a word, however long, and nowhere else', () => {
  rememberSecret('s3cr.t*');
  assert.equal(withoutSecrets('a s3cr.t* b (s3cr.t*) s3cr.t*'), 'a *** b (***) ***', 'every place, its regex characters taken as they are');
  assert.equal(withoutSecrets('xs3cr.t* s3cr.t*9'), 'xs3cr.t* s3cr.t*9', 'not inside a longer word');
  rememberSecret('aaaa');
  assert.equal(withoutSecrets('aaaa-aaaaa-aaaa'), '***-aaaaa-***', 'a repeat of it is another word');
  // Far past what V8 takes as a regular expression (some tens of thousands of characters), which
  // once made the search itself fail with an error that quoted the password.
  const long = `L${'x'.repeat(100_000)}`;
  rememberSecret(long);
  assert.equal(withoutSecrets(`WRONGPASS ${long}: no`), 'WRONGPASS ***: no');
  assert.equal(withoutSecrets(`${long}${long}`), `${long}${long}`, 'two in a row are one longer word');
});

test('withoutSecrets: a password of 1 to 3 characters hidden where a server quotes it, and not as a piece of its words', () => {
  rememberSecret('p!');
  rememberSecret('cmd');
  assert.equal(withoutSecrets("ERR unknown subcommand 'p!'. Try HELP."), "ERR unknown subcommand '***'. Try HELP.");
  assert.equal(withoutSecrets('ERR wrong number of arguments: `bob`, `cmd`, "cmd"'), 'ERR wrong number of arguments: `bob`, `***`, "***"');
  assert.equal(withoutSecrets('ERR unknown cmd p! here'), 'ERR unknown cmd p! here', 'unquoted, it may be a word of the server’s own');
  assert.equal(withoutSecrets("'cmds'"), "'cmds'", 'a longer quoted word is not it');
});
