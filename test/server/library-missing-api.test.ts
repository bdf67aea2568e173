/**
 * An installed library that lacks what the tool calls: one line naming the library, its version
 * and the missing piece, exit 2, nothing written to the server. Each case is a package on disk: a
 * temporary project folder (`--lib-from`) whose node_modules holds a package of the library's name
 * and a version of its own, whose exports lack one entry point the tool calls (or whose
 * package.json points at no file). The real packages' checks run in the library-*.test.ts files.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { literal } from '../helpers/literal.js';
import { forOneServerKind } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A project folder whose node_modules holds `name` at `version`, its main file `main` with `source` as its code. */
function projectWith(name: string, version: string, source: string | undefined, main = 'index.js'): string {
  const project = tempDir('emq-race-oldlib-');
  const folder = join(project, 'node_modules', name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name, version, main }));
  if (source !== undefined) writeFileSync(join(folder, main), source);
  return project;
}

const CASES = [
  {
    lib: 'bullmq',
    version: '4.0.0',
    // Everything but the stalled check the tool calls on each worker.
    source: 'class Queue { addBulk() {} close() {} }\nclass Worker { waitUntilReady() {} getNextJob() {} close() {} }\nmodule.exports = { Queue, Worker };\n',
    missing: 'Worker#moveStalledJobsToWait',
  },
  {
    lib: 'bee-queue',
    version: '1.0.0',
    source: 'class Queue { ready() {} createJob() {} saveAll() {} process() {} close() {} }\nmodule.exports = Queue;\n',
    missing: 'Queue#checkStalledJobs',
  },
  {
    lib: 'node-resque',
    version: '9.7.5',
    source: 'class Queue { connect() {} enqueue() {} end() {} }\nclass Worker { connect() {} start() {} }\nmodule.exports = { Queue, Worker };\n',
    missing: 'Queue#cleanOldWorkers',
  },
  { lib: 'bullmq', version: '6.8.0', source: 'module.exports = {};\n', missing: 'Queue' },
] as const;

forOneServerKind(import.meta.url, 'a library lacking what emq-race calls', (handle) => {
  const refusedCleanly = async (project: string, lib: string, pattern: RegExp): Promise<void> => {
    const result = await runCli(['--url', handle.url, '--lib', lib, '--lib-from', project, '--jobs', '200', '--loop-jobs', '200']);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    // One line: not even the warning a version outside the tested range gets before a run.
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? '', pattern);
    const redis = new Redis(handle.url);
    try {
      assert.deepEqual(await redis.keys('*'), [], 'the refused run wrote to the server');
    } finally {
      redis.disconnect();
    }
  };

  for (const { lib, version, source, missing } of CASES) {
    test(`${lib} ${version} without ${missing}: exit 2, one line naming it, nothing written`, async () => {
      const project = projectWith(lib, version, source);
      const at = literal(join(project, 'node_modules', lib, 'index.js'));
      await refusedCleanly(
        project,
        lib,
        new RegExp(
          `^emq-race: --lib ${lib}: ${lib} ${version.replace(/\./g, '\\.')} \\(at ${at}\\) has no ${missing}, which emq-race calls to race its recovery`,
        ),
      );
    });
  }

  test('a package whose main file is not there: exit 2, one line naming the version, nothing written', async () => {
    const project = projectWith('bullmq', '6.9.0', undefined, 'dist/gone.js');
    await refusedCleanly(project, 'bullmq', /^emq-race: --lib bullmq: bullmq 6\.9\.0 \(at .*\) has no entry point require\('bullmq'\) can load/);
  });

  test('a package whose main file throws as it loads: exit 2, one line with its message', async () => {
    const project = projectWith('bee-queue', '2.0.1', "throw new Error('needs a newer Node');\n");
    await refusedCleanly(project, 'bee-queue', /^emq-race: --lib bee-queue: bee-queue 2\.0\.1 \(at .*index\.js\) does not load: needs a newer Node$/);
  });
});
