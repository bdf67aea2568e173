/**
 * `emq-race grid --lib bullmq`: the library's three modes over sweepers × latency on real servers,
 * small runs. Every cell races each mode; BullMQ's own check and the guarded port stay clean in
 * every cell, the naive port races where it has company and not alone; the JSON is the grid's
 * contract; the runs' keys are all gone after, and another application's BullMQ queue on the same
 * server is byte for byte what it was, through the grid and `clean --all`. Without --jobs, a grid of
 * a library's modes seeds the race's default, not the grid's own.
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { GridJson } from '../../src/grid/json.js';
import { runCli } from '../helpers/cli.js';
import { foreignBullmq } from '../helpers/foreign-bullmq.js';
import { useForeignQueue } from '../helpers/foreign-queue.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { forEachServer } from '../helpers/servers.js';

/** The project's folder, whose node_modules holds the bullmq the tests race. */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

forEachServer('grid --lib bullmq', (handle) => {
  const foreign = useForeignQueue(handle, 'bull:', foreignBullmq, 20);
  /** `emq-race grid --lib bullmq … --json` on this server: its JSON, once it exited 0. */
  const libraryGrid = async (args: readonly string[]): Promise<GridJson> => {
    const result = await runCli(['grid', '--url', handle.url, '--lib', 'bullmq', '--lib-from', PROJECT, ...args, '--json']);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as GridJson;
  };

  test('grid --lib bullmq --vary sweepers=1,8 --vary latency=0,2: every cell races the three modes; the library and the guarded port clean, the naive port races with 8', async () => {
    const grid = await libraryGrid(['--vary', 'sweepers=1,8', '--vary', 'latency=0,2', '--jobs', '20']);
    assertMatchesSchema(grid);
    assert.equal(grid.complete, true);
    assert.deepEqual(grid.modes, ['bullmq', 'bullmq-naive', 'bullmq-guarded']);
    assert.deepEqual(
      grid.cells.map((cell) => cell.at),
      [
        { sweepers: 1, latency: 0 },
        { sweepers: 1, latency: 2 },
        { sweepers: 8, latency: 0 },
        { sweepers: 8, latency: 2 },
      ],
    );
    for (const cell of grid.cells) {
      assert.deepEqual(
        cell.runs.map((run) => run.mode),
        grid.modes,
      );
      for (const run of cell.runs) {
        assert.equal(run.sweepers, cell.at.sweepers);
        assert.deepEqual(run.library, { name: 'bullmq', version: '6.7.0' });
        assert.equal(run.recoveries >= run.jobs, true, `${run.mode}: every job recovered`);
      }
      assert.equal(cell.latency !== null, cell.at.latency === 2, 'the proxy stands only in the cells with latency');
      for (const mode of cell.modes) {
        const raced = mode.racedTrials > 0;
        const expected = mode.mode === 'bullmq-naive' && cell.at.sweepers === 8;
        assert.equal(raced, expected, `${mode.mode} at ${JSON.stringify(cell.at)}: ${JSON.stringify(mode)}`);
        if (expected) assert.ok(mode.doubleRecoveriesPer1000 > 0, JSON.stringify(mode));
      }
    }
    assert.deepEqual(await foreign.ourKeys(), [], "every cell removed its keys, BullMQ's namespace included");
    await foreign.assertUntouched("the other application's BullMQ keys are untouched by the grid");
    const cleaned = await runCli(['clean', '--url', handle.url, '--all', '--yes']);
    assert.equal(cleaned.code, 0, cleaned.stderr);
    await foreign.assertUntouched("the other application's BullMQ keys are untouched by clean --all");
  });

  test("grid --lib bullmq without --jobs: the race's default of 1,000 (the round-trip ports 500), not the grid's 80,000, on which BullMQ's own check holds the server past busy-reply-threshold", async () => {
    const grid = await libraryGrid(['--vary', 'sweepers=2', '--vary', 'latency=0']);
    assert.deepEqual(
      grid.cells.flatMap((cell) => cell.runs.map((run) => [run.mode, run.jobs])),
      [
        ['bullmq', 1000],
        ['bullmq-naive', 500],
        ['bullmq-guarded', 500],
      ],
    );
    assert.deepEqual(await foreign.ourKeys(), []);
    await foreign.assertUntouched("the other application's BullMQ keys are untouched by the grid");
  });
});
