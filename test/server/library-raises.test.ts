/**
 * A queue library that throws a TypeError of its own mid-run (here a BullMQ whose stalled check
 * calls a string's method on a number) is said as that package's error, in one line, exit 3: not
 * the server's words, and not a bug of the tool's. What the run leaves behind follows on the same
 * line (--keep), or nothing is left (without it). The package is a real BullMQ behind a wrapper
 * folder reached with --lib-from, its Worker's stalled check replaced.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { runCli } from '../helpers/cli.js';
import { literal } from '../helpers/literal.js';
import { forOneServerKind } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A project folder whose bullmq is the real one with Worker#moveStalledJobsToWait throwing a TypeError. */
function throwingBullmq(): string {
  const real = createRequire(import.meta.url).resolve('bullmq');
  const project = tempDir('emq-race-libbug-');
  const folder = join(project, 'node_modules', 'bullmq');
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'bullmq', version: '6.7.0', main: 'index.js' }));
  // Named one by one: an ES import of a CommonJS file sees only the exports it can read off the source.
  writeFileSync(
    join(folder, 'index.js'),
    [
      `const real = require(${JSON.stringify(real)});`,
      'exports.Queue = real.Queue;',
      'exports.Worker = class Worker extends real.Worker {',
      '  async moveStalledJobsToWait() {',
      '    const reply = 1;',
      "    return reply.startsWith('x');",
      '  }',
      '};',
      '',
    ].join('\n'),
  );
  return project;
}

forOneServerKind(import.meta.url, "a queue library's own TypeError", (handle) => {
  const keys = async (): Promise<string[]> => {
    const redis = new Redis(handle.url);
    try {
      return await redis.keys('emq:*');
    } finally {
      redis.disconnect();
    }
  };

  /** A BullMQ run of 200 jobs whose library throws, with `extra` flags. */
  const raceThrowing = (extra: readonly string[] = []) =>
    runCli(['--url', handle.url, '--lib', 'bullmq', '--lib-from', throwingBullmq(), '--mode', 'bullmq', '--jobs', '200', ...extra]);

  test("said as the library's, one line, exit 3; without --keep nothing is left", async () => {
    const result = await raceThrowing();
    assert.equal(result.code, 3, result.stderr);
    assert.deepEqual(
      result.stderr.split('\n').filter((line) => line.startsWith('emq-race: ')),
      [`emq-race: bullmq raised TypeError while speaking to the server at ${handle.url}: reply.startsWith is not a function`],
    );
    assert.doesNotMatch(result.stderr, /a bug|server error|\n\s+at /);
    assert.deepEqual(await keys(), []);
  });

  test('with --keep the same line names the kept keys and how to remove them', async () => {
    const result = await raceThrowing(['--keep', '--json']);
    assert.equal(result.code, 3, result.stderr);
    const line = result.stderr.split('\n').find((text) => text.startsWith('emq-race: ')) ?? '';
    const match = new RegExp(
      `^emq-race: bullmq raised TypeError while speaking to the server at ${literal(handle.url)}: reply\\.startsWith is not a function; the keys of queue (race-[0-9a-f]+) .*are kept \\(--keep\\): remove them with emq-race clean --queue (race-[0-9a-f]+)`,
    ).exec(line);
    assert.ok(match, line);
    assert.equal(match[1], match[2]);
    // The JSON error object carries the same sentence.
    assert.equal((JSON.parse(result.stdout) as { error: { message: string } }).error.message, line.slice('emq-race: '.length));
    assert.ok((await keys()).length > 0, 'the keys are kept');
    const cleaned = await runCli(['clean', '--url', handle.url, '--queue', match[1] ?? '']);
    assert.equal(cleaned.code, 0, cleaned.stderr);
    assert.deepEqual(await keys(), []);
  });
});
