/**
 * A bug of the tool's that reaches the top once the report is printed (a timer or socket callback
 * firing as the session closes, or after the command has returned, as the process ends): the
 * report on stdout stays whole, the bug is said on stderr with its stack under one header line
 * that says the output was complete, and the process exits 3, the code of a bug, never Node's own
 * exit 1, which a CI job would read as an --expect that failed. The run's keys are gone all the
 * same. test/helpers/late-bug.ts throws it, loaded into the spawned CLI with `--import`.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { spawnCli } from '../helpers/cli.js';
import { within } from '../helpers/cli-process.js';
import { queueKeysLeft } from '../helpers/keyspace.js';
import { forOneServerKind } from '../helpers/servers.js';

const LIMIT_MS = 60_000;
const HEADER = 'emq-race: unexpected error (a bug; please report it), once its output was complete:';

/** The environment that loads the late bug, thrown `when`. */
function lateBug(when: 'closing' | 'after'): NodeJS.ProcessEnv {
  const helper = new URL('../helpers/late-bug.js', import.meta.url).href;
  return { EMQ_RACE_TEST_LATE_BUG: when, NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import=${helper}`].filter(Boolean).join(' ') };
}

forOneServerKind(import.meta.url, 'a bug past every caller once the report is printed', (handle) => {
  let redis: Redis;
  before(async () => {
    redis = await connect(parseServerUrl(handle.url));
  });
  after(() => redis?.disconnect());
  const left = (queue: string): Promise<string[]> => queueKeysLeft(redis, queue);

  /** The one JSON report on stdout, whole, with no error object after it. */
  const wholeReport = (stdout: string): void => {
    const lines = stdout.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 1, stdout);
    const report = JSON.parse(lines[0] ?? '') as { runs?: { mode: string }[]; error?: unknown };
    assert.equal(report.error, undefined, stdout);
    assert.deepEqual(
      report.runs?.map((run) => run.mode),
      ['atomic'],
    );
  };

  test('while the session closes: the report whole, the bug with its stack after it, exit 3', async () => {
    const args = ['--url', handle.url, '--mode', 'atomic', '--jobs', '200', '--queue', 'late-bug-closing', '--json', '--expect', 'atomic=clean'];
    const result = await within(LIMIT_MS, 'the run', spawnCli(args, lateBug('closing')));
    assert.equal(result.code, 3, result.stderr);
    wholeReport(result.stdout);
    assert.match(result.stderr, /^emq-race: expectation met: atomic=clean\n/);
    assert.ok(result.stderr.includes(`${HEADER}\nTypeError: a late bug while the session closes\n    at `), result.stderr);
    assert.deepEqual(await left('late-bug-closing'), []);
  });

  test('after the command returned: the bug with its stack, exit 3 and not the 1 of a missed --expect', async () => {
    // An --expect the atomic run never meets: without the bug, exit 1.
    const args = ['--url', handle.url, '--mode', 'atomic', '--jobs', '200', '--queue', 'late-bug-after', '--json', '--expect', 'atomic=race'];
    const result = await within(LIMIT_MS, 'the run', spawnCli(args, lateBug('after')));
    assert.equal(result.code, 3, result.stderr);
    wholeReport(result.stdout);
    assert.match(result.stderr, /^emq-race: --expect atomic=race missed: /m);
    assert.ok(result.stderr.includes(`${HEADER}\nTypeError: a late bug after the command returned\n    at `), result.stderr);
    assert.doesNotMatch(result.stderr, /^Node\.js v/m, "Node's own report of an uncaught exception");
    assert.deepEqual(await left('late-bug-after'), []);
  });

  test('clean, once its lines are written: the lines whole, the bug with its stack after them, exit 3', async () => {
    const kept = await within(
      LIMIT_MS,
      'the kept run',
      spawnCli(['--url', handle.url, '--mode', 'atomic', '--jobs', '200', '--queue', 'late-bug-clean', '--keep']),
    );
    assert.equal(kept.code, 0, kept.stderr);
    assert.notDeepEqual(await left('late-bug-clean'), []);
    const result = await within(LIMIT_MS, 'clean', spawnCli(['clean', '--queue', 'late-bug-clean', '--url', handle.url], lateBug('closing')));
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stdout, /^removed queue late-bug-clean: \d+ keys\n$/);
    assert.ok(result.stderr.startsWith(`${HEADER}\nTypeError: a late bug while the session closes\n    at `), result.stderr);
    assert.deepEqual(await left('late-bug-clean'), []);
  });
});
