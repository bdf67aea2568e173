/**
 * --csv of a library run (--lib) against a real server, run in-process: every row names the
 * library and the version found in the project, in the columns `library.name` and
 * `library.version` after the model queue's; a mode of the tool's own beside them has those
 * fields empty; and a run of the model queue alone has no such column.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { csvField, csvFields } from '../../src/report/csv.js';
import { runCli } from '../helpers/cli.js';
import { forOneServerKind } from '../helpers/servers.js';

/** The project's folder, whose node_modules holds the libraries the tests race. */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

/** The versions the project pins (package-lock.json), which the rows must name. */
const LIBRARIES = [
  { name: 'bullmq', version: '6.7.0', modes: ['bullmq', 'bullmq-naive', 'bullmq-guarded'] },
  { name: 'node-resque', version: '9.7.1', modes: ['node-resque', 'node-resque-naive', 'node-resque-guarded'] },
  { name: 'bee-queue', version: '2.0.0', modes: ['bee-queue', 'bee-queue-naive', 'bee-queue-guarded'] },
] as const;

/** A --csv run's lines, each parsed into its fields (every field is quoted, so a JSON array reads it). */
async function csvRun(args: readonly string[]): Promise<{ lines: string[]; header: string[]; rows: Record<string, string>[] }> {
  const result = await runCli([...args, '--csv']);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trimEnd().split('\n');
  const [header = [], ...values] = lines.map((line) => JSON.parse(`[${line}]`) as string[]);
  for (const row of values) assert.equal(row.length, header.length, 'every column on every row');
  return { lines, header, rows: values.map((row) => Object.fromEntries(row.map((value, i) => [header[i], value]))) };
}

forOneServerKind(import.meta.url, '--csv of a library run', (handle) => {
  for (const library of LIBRARIES) {
    test(`--lib ${library.name} --csv: library.name ${library.name} and library.version ${library.version} on every row, after the model queue's columns`, async () => {
      const { header, rows } = await csvRun(['--url', handle.url, '--lib', library.name, '--lib-from', PROJECT, '--jobs', '100', '--loop-jobs', '100']);
      assert.deepEqual(header, [...csvFields(), 'library.name', 'library.version']);
      assert.deepEqual(
        rows.map((row) => [row.mode, row['library.name'], row['library.version']]),
        library.modes.map((mode) => [mode, library.name, library.version]),
      );
    });
  }

  test("--lib bullmq --mode bullmq,atomic --csv: the tool's own mode beside the library's has its library fields empty", async () => {
    const { header, rows } = await csvRun(['--url', handle.url, '--lib', 'bullmq', '--lib-from', PROJECT, '--mode', 'bullmq,atomic', '--jobs', '100']);
    assert.deepEqual(header.slice(-2), ['library.name', 'library.version']);
    assert.deepEqual(
      rows.map((row) => [row.mode, row['library.name'], row['library.version']]),
      [
        ['bullmq', 'bullmq', '6.7.0'],
        ['atomic', '', ''],
      ],
    );
  });

  test("a run of the model queue alone: the header is the model queue's columns and no library column", async () => {
    const { lines, rows } = await csvRun(['--url', handle.url, '--mode', 'atomic,loop', '--jobs', '100']);
    assert.equal(lines[0], csvFields().map(csvField).join(','));
    assert.doesNotMatch(lines[0] ?? '', /library/);
    assert.deepEqual(
      rows.map((row) => row.mode),
      ['atomic', 'loop'],
    );
  });
});
