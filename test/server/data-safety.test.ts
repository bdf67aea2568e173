/**
 * Someone else's data survives every mode: a server filled with keys of every type (some with a
 * TTL) and with two other `emq:{…}` queues keeps every key byte for byte, and gains none, across
 * runs of every mode, dead-lettering runs, kept runs removed with `clean`, and refused runs.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Redis } from 'ioredis';
import { connect, parseServerUrl } from '../../src/server/connection.js';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { forEachServer } from '../helpers/servers.js';
import { fillUnrelated, unrelatedState } from '../helpers/unrelated-data.js';
import { MODES } from '../../src/shared/model.js';
import { modeSets } from '../../src/sweepers/strategies.js';

forEachServer('data safety', (handle) => {
  let redis: Redis;
  let initial: Awaited<ReturnType<typeof unrelatedState>>;
  before(async () => {
    redis = await connect(parseServerUrl(handle.url));
    await fillUnrelated(redis);
    initial = await unrelatedState(redis);
  });
  after(() => redis?.disconnect());

  const BUILT_IN_SCRIPT = fileURLToPath(new URL('../../src/lua/sweep-stalled.lua', import.meta.url));
  const unchanged = async (): Promise<void> => assert.deepEqual(await unrelatedState(redis), initial);

  // Safety needs only some keys written and removed by each mode, not a race worth measuring: a
  // small run per mode, and `--mode all` (which holds `both`) once, its modes checked in its JSON.
  test(`--mode all (${modeSets().all.join(', ')}) leaves every unrelated key as it was and adds none`, async () => {
    const result = await runCli(['--url', handle.url, '--mode', 'all', '--jobs', '30', '--sweepers', '4', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const ran = (JSON.parse(result.stdout) as { runs: { mode: string }[] }).runs.map((run) => run.mode);
    assert.deepEqual([...new Set(ran)].sort(), [...modeSets().all].sort());
    assert.ok(
      modeSets().both.every((mode) => ran.includes(mode)),
      'all holds both',
    );
    await unchanged();
  });

  for (const mode of MODES.filter((mode) => !modeSets().all.includes(mode))) {
    test(`--mode ${mode} leaves every unrelated key as it was and adds none`, async () => {
      // The script mode runs a user's script: the built-in one stands in for it here.
      const script = mode === 'script' ? ['--script', BUILT_IN_SCRIPT] : [];
      const result = await runCli(['--url', handle.url, '--mode', mode, '--jobs', '30', '--sweepers', '4', ...script]);
      assert.equal(result.code, 0, result.stderr);
      await unchanged();
    });
  }

  // Every consequence with every mode, two consequences or more to a run where they may go together
  // (workers cannot go with cycles): each pair of mode and consequence is still run once. The
  // client-kill fault's first blow lands as the race starts, so a short run is hit too.
  for (const extra of [
    ['--fault', 'sweeper-crash', '--workers', '2', '--observe'],
    ['--fault', 'client-kill', '--cycles', '3', '--pending', 'zset'],
  ]) {
    test(`--mode all ${extra.join(' ')} leaves every unrelated key as it was and adds none`, async () => {
      const result = await runCli(['--url', handle.url, '--mode', 'all', '--jobs', '40', '--sweepers', '4', ...extra]);
      assert.equal(result.code, 0, result.stderr);
      await unchanged();
    });
  }

  test('a run that dead-letters every job (--max-stalled 1) leaves nothing either', async () => {
    const result = await runCli(['--url', handle.url, '--jobs', '40', '--sweepers', '3', '--max-stalled', '1']);
    assert.equal(result.code, 0, result.stderr);
    await unchanged();
  });

  test('kept runs removed with clean --all: only emq-race queues go', async () => {
    const kept = await runCli(['--url', handle.url, '--jobs', '60', '--keep', '--queue', 'race-safety']);
    assert.equal(kept.code, 0, kept.stderr);
    assert.notDeepEqual(await unrelatedState(redis), initial);
    const clean = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
    assert.equal(clean.code, 0, clean.stderr);
    assert.match(clean.stdout, /removed queue race-safety-atomic: \d+ keys/);
    assert.match(clean.stdout, /removed queue race-safety-loop: \d+ keys/);
    assert.doesNotMatch(clean.stdout, /orders|0000beef/);
    await unchanged();
  });

  for (const queue of ['orders', 'race-0000beef']) {
    test(`another program's queue ${queue}: a run refuses it and clean leaves it`, async () => {
      const run = await runCli(['--url', handle.url, '--queue', queue, '--mode', 'atomic', '--jobs', '50']);
      assert.equal(run.code, 2, run.stderr);
      assert.match(oneErrorLine(run.stderr) ?? '', /already in use/);
      const clean = await runCli(['clean', '--url', handle.url, '--queue', queue]);
      assert.equal(clean.code, 2, clean.stderr);
      assert.match(oneErrorLine(clean.stderr) ?? '', /not written by emq-race/);
      await unchanged();
    });
  }
});
