/**
 * Finding the user's library before any server starts: its Redis client (BullMQ 6's ioredis, an
 * optional peer `npm install bullmq` leaves out; Bee-Queue's redis and node-resque's ioredis, their
 * dependencies) loadable from the library's own folder, `--lib-from` a folder that is there, the
 * library's package.json readable, and the flags a library's run would ignore refused when given.
 * Each refusal is one line, exit 2, nothing written to the server. The packages are on disk: a
 * temporary project folder whose node_modules holds the real package.json of the tool's own copy
 * (what the real package declares), or the tool's own copy linked whole.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { checkLibraryFlagsGiven } from '../../src/cli/options.js';
import { findLibrary } from '../../src/libraries/resolve.js';
import type { LibraryName } from '../../src/shared/model.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { literal } from '../helpers/literal.js';
import { forOneServerKind } from '../helpers/servers.js';
import { tempDir } from '../helpers/temp-dir.js';

/** The tool's own folder, whose node_modules holds the libraries as its tests install them. */
const TOOL = fileURLToPath(new URL('../../../', import.meta.url));

/** A project whose node_modules holds `lib`'s real package.json alone: what the package declares, and none of its dependencies. */
function projectWithManifestOf(lib: string): { project: string; folder: string } {
  const project = tempDir('emq-race-noclient-');
  const folder = join(project, 'node_modules', lib);
  mkdirSync(folder, { recursive: true });
  copyFileSync(join(TOOL, 'node_modules', lib, 'package.json'), join(folder, 'package.json'));
  return { project, folder };
}

const CLIENTS: readonly { lib: LibraryName; client: string }[] = [
  { lib: 'bullmq', client: 'ioredis' },
  { lib: 'bee-queue', client: 'redis' },
  { lib: 'node-resque', client: 'ioredis' },
];

forOneServerKind(import.meta.url, 'finding the library before any server starts', (handle) => {
  const refused = async (args: readonly string[], pattern: RegExp): Promise<void> => {
    const result = await runCli(['--url', handle.url, ...args]);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
    assert.match(oneErrorLine(result.stderr) ?? result.stderr, pattern);
    const redis = new Redis(handle.url);
    try {
      assert.deepEqual(await redis.keys('*'), [], 'the refused run wrote to the server');
    } finally {
      redis.disconnect();
    }
  };

  for (const { lib, client } of CLIENTS) {
    // A peer (BullMQ 6's ioredis) is installed by name; a dependency of the library's own comes with
    // the library reinstalled: `npm install redis` would give Bee-Queue a redis it cannot use.
    const install = lib === 'bullmq' ? `install it with npm install ${client}` : `reinstall ${lib} with npm install ${lib}@\\S+`;
    test(`${lib} installed without ${client}, which it loads: exit 2, one line naming ${client} and the line that installs it`, async () => {
      const { project, folder } = projectWithManifestOf(lib);
      await refused(
        ['--lib', lib, '--lib-from', project],
        new RegExp(
          `^emq-race: --lib ${lib}: ${lib} \\S+ needs ${client} \\S+, which ${lib} cannot load from ${literal(folder)}: ${install} in ${literal(project)}\\b`,
        ),
      );
    });
  }

  // Bee-Queue 2 speaks node_redis 3's API: beside a redis 4 or later its queue never became ready,
  // and the run waited for ever, a first signal's clean-up too. Refused before anything is written, as a client of any range the library
  // does not declare.
  for (const { lib, client, other, fix } of [
    {
      lib: 'bee-queue',
      client: 'redis',
      other: '6.4.0',
      fix: 'reinstall bee-queue with npm install bee-queue@2.0.0 in PROJECT, which puts the redis it depends on beside it',
    },
    { lib: 'bullmq', client: 'ioredis', other: '4.28.5', fix: "install one it takes with npm install 'ioredis@>=5.0.0' in PROJECT" },
  ] as const) {
    test(`${lib} that would load ${client} ${other}, outside the range it declares: exit 2, one line naming both versions and the fix`, async () => {
      const { project } = projectWithManifestOf(lib);
      const clientFolder = join(project, 'node_modules', client);
      mkdirSync(clientFolder);
      writeFileSync(join(clientFolder, 'package.json'), JSON.stringify({ name: client, version: other }));
      const range = lib === 'bee-queue' ? '^3.1.2' : '>=5.0.0';
      await refused(
        ['--lib', lib, '--lib-from', project],
        new RegExp(
          `^emq-race: --lib ${lib}: ${lib} \\S+ needs ${client} ${literal(range)}, and would load ${client} ${literal(other)} from ${literal(clientFolder)}: ${literal(fix.replace('PROJECT', project))}$`,
        ),
      );
    });
  }

  test('bullmq with ioredis beside it passes the check (and goes on to what else it lacks); a linked bullmq loads ioredis from where it really lies', () => {
    const { project, folder } = projectWithManifestOf('bullmq');
    symlinkSync(join(TOOL, 'node_modules', 'ioredis'), join(project, 'node_modules', 'ioredis'), 'dir');
    // Only the package.json was copied: the next refusal is the missing entry point, not ioredis.
    assert.throws(
      () => findLibrary('bullmq', project),
      (err: Error) => new RegExp(`^--lib bullmq: bullmq \\S+ \\(at ${literal(folder)}\\) has no entry point`).test(err.message),
    );
    const linked = tempDir('emq-race-linked-');
    mkdirSync(join(linked, 'node_modules'));
    symlinkSync(join(TOOL, 'node_modules', 'bullmq'), join(linked, 'node_modules', 'bullmq'), 'dir');
    assert.equal(findLibrary('bullmq', linked).name, 'bullmq');
    // Linked from a checkout with no ioredis of its own: the project's ioredis is not the one it
    // loads, and the line names the checkout, where the install goes.
    const checkout = tempDir('emq-race-checkout-');
    copyFileSync(join(TOOL, 'node_modules', 'bullmq', 'package.json'), join(checkout, 'package.json'));
    const user = tempDir('emq-race-user-');
    mkdirSync(join(user, 'node_modules'));
    symlinkSync(checkout, join(user, 'node_modules', 'bullmq'), 'dir');
    symlinkSync(join(TOOL, 'node_modules', 'ioredis'), join(user, 'node_modules', 'ioredis'), 'dir');
    assert.throws(
      () => findLibrary('bullmq', user),
      (err: Error) =>
        new RegExp(`needs ioredis \\S+, which bullmq cannot load from ${literal(checkout)}: install it with npm install ioredis in ${literal(checkout)}$`).test(
          err.message,
        ),
    );
  });

  test('--lib-from a folder that is not there, a file, or an empty path: exit 2, one line saying so', async () => {
    const missing = join(tempDir('emq-race-gone-'), 'nothing-here');
    await refused(['--lib', 'bullmq', '--lib-from', missing], new RegExp(`^emq-race: --lib-from: ${literal(missing)} does not exist; `));
    const file = join(tempDir('emq-race-file-'), 'package.json');
    writeFileSync(file, '{}');
    await refused(['--lib', 'bullmq', '--lib-from', file], new RegExp(`^emq-race: --lib-from: ${literal(file)} is not a folder; `));
    await refused(['--lib', 'bullmq', '--lib-from', ''], /^emq-race: --lib-from: an empty path; /);
  });

  test('a library whose package.json is not JSON: exit 2, one line naming the file, no stack', async () => {
    const project = tempDir('emq-race-broken-');
    const folder = join(project, 'node_modules', 'bullmq');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'package.json'), '{"name":"bullmq", broken');
    await refused(
      ['--lib', 'bullmq', '--lib-from', project],
      new RegExp(`^emq-race: --lib bullmq: ${literal(join(folder, 'package.json'))} cannot be read as JSON `),
    );
  });

  test('a flag a library run would ignore, given: exit 2, one line naming it; --max-stalled only for a library with no stall limit', async () => {
    const from = ['--lib-from', TOOL];
    await refused(['--lib', 'bullmq', ...from, '--max-sweeps', '1'], /^emq-race: --max-sweeps: the bullmq modes do not use it \(/);
    await refused(
      ['--lib', 'bullmq', ...from, '--interval', '3000', '--jitter', '3000'],
      /^emq-race: --interval: the bullmq modes do not use it .*leave --interval, --jitter out/,
    );
    await refused(['--mode', 'bullmq-naive', ...from, '--probe-delay', '5'], /^emq-race: --probe-delay: the bullmq modes do not use it/);
    await refused(
      ['--lib', 'node-resque', ...from, '--server-stats'],
      /^emq-race: --server-stats: the node-resque modes do not use it \(the server's latency histogram/,
    );
    await refused(['--lib', 'bullmq', ...from, '--batch', '5'], /^emq-race: --batch: the bullmq modes do not use it/);
    await refused(
      ['--lib', 'bee-queue', ...from, '--max-stalled', '2'],
      /^emq-race: --max-stalled: the bee-queue modes do not use it \(Bee-Queue keeps no count/,
    );
    await refused(['--lib', 'node-resque', ...from, '--max-stalled', '2'], /^emq-race: --max-stalled: the node-resque modes do not use it/);
  });
});

test("the ignored flags: refused only when given, and not beside the tool's own modes, which read them", () => {
  const library = { name: 'bullmq' as const, from: '.', asked: '--lib bullmq' };
  assert.throws(() => checkLibraryFlagsGiven({ library, modes: ['bullmq', 'bullmq-naive'] }, ['--lib', '--batch']), /--batch: the bullmq modes do not use it/);
  assert.doesNotThrow(() => checkLibraryFlagsGiven({ library, modes: ['bullmq'] }, ['--lib', '--jobs', '--sweepers', '--max-stalled', '--loop-jobs']));
  assert.doesNotThrow(() => checkLibraryFlagsGiven({ library, modes: ['atomic', 'bullmq'] }, ['--batch', '--interval']));
  assert.doesNotThrow(() => checkLibraryFlagsGiven({ library: undefined, modes: ['loop'] }, ['--batch']));
  assert.throws(
    () => checkLibraryFlagsGiven({ library: { name: 'bee-queue', from: '.', asked: '--lib bee-queue' }, modes: ['bee-queue'] }, ['--max-stalled']),
    (err: Error & { exitCode?: number }) => err.exitCode === 2 && /^--max-stalled: the bee-queue modes/.test(err.message),
  );
});
