/**
 * The test `--export-test` writes, run as a user runs it (node --test, emq-race on PATH) against a
 * real server, on witnesses whose one stall the loop counts twice: its failure names the over-count,
 * judged on the job's real stall as the audit does, and the same file passes once its first line
 * names the atomic sweep. One server kind: the replay is explain's, run on both in explain.test.ts.
 */
import assert from 'node:assert/strict';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { exportedTest } from '../../src/explore/export-test.js';
import type { ShrunkWitness } from '../../src/shared/model.js';
import { BIN, runProcess } from '../helpers/cli.js';
import { forOneServerKind } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

const witness = (command: string): ShrunkWitness => ({
  mode: 'loop',
  anomaly: 'overcountedStalls',
  outcome: 'duplicateAndOverCount',
  from: { jobs: 50, sweepers: 4, seed: 7 },
  steps: [{ stage: 'one-job', jobs: 1, sweepers: 2, seed: 7, found: true }],
  switches: 2,
  schedule: null,
  command,
});

const WITNESSES: readonly [string, string][] = [
  ['stalled 0', 'emq-race explain --mode loop --schedule A:detect,A:probe,B:detect,B:probe,B:move,B:read,B:write,A:move,A:read,A:write'],
  [
    'stalled-before 2, max-stalled 3: both dead-letter',
    'emq-race explain --mode loop --stalled-before 2 --max-stalled 3 --schedule B:detect,A:detect,B:probe,A:probe,A:move,A:read,A:write,A:dead-letter,B:move,B:read,B:write,B:dead-letter',
  ],
];

forOneServerKind(import.meta.url, '--export-test on an over-counted stall', (handle) => {
  for (const [what, command] of WITNESSES) {
    test(`${what}: the exported test fails naming the stall counted twice, and passes for atomic`, async () => {
      const dir = tempDir('emq-race-export-');
      const file = join(dir, 'witness.test.mjs');
      const text = exportedTest(witness(command), command, 'a test');
      writeFileSync(file, text);
      symlinkSync(BIN, join(dir, 'emq-race'));
      // NODE_TEST_CONTEXT would make the child report to this test runner rather than as a user's run does.
      const { NODE_TEST_CONTEXT: _context, ...inherited } = process.env;
      const env = { ...inherited, PATH: `${dir}:${process.env.PATH ?? ''}`, REDIS_URL: handle.url };

      const racing = await runProcess(process.execPath, ['--test', file], { env, cwd: dir });
      assert.notEqual(racing.code, 0, 'the loop fails its own witness');
      assert.match(racing.stdout, /stall counted twice: 1 over-counted/, racing.stdout);
      assert.match(racing.stdout, /the job was recovered 2 times/, 'every way it came out wrong is named');
      assert.doesNotMatch(racing.stdout, /increments lost/, 'no increment was lost: each recovery raised the counter');

      writeFileSync(file, text.replace(/^const MODE = 'loop';/, "const MODE = 'atomic';"));
      const fixed = await runProcess(process.execPath, ['--test', file], { env, cwd: dir });
      assert.equal(fixed.code, 0, fixed.stdout);
    });
  }
});
