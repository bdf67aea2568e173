/**
 * JSON a script can trust, through the built CLI against real servers: every object --json prints
 * (a race, --trials, --queues, faults and workers, a verdict, explain, an error) carries the tool's
 * version and the schema number and matches the shipped schema; each run says whether it was clean
 * and the sum of its anomaly figures; a failure under --json is still one object on stdout.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Command } from 'commander';
import { asksForJson } from '../../src/cli/program.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { BUILT_IN_SCRIPT, FORGETS_ZREM, scriptFile } from '../helpers/scripts.js';
import { forOneServerKind } from '../helpers/servers.js';
import { runResult } from '../helpers/run-result.js';
import { JSON_SCHEMA, reportJson } from '../../src/report/json.js';
import { ANOMALIES, LIBRARY_NAMES, VERSION } from '../../src/shared/model.js';
import { modes } from '../../src/sweepers/strategies.js';
import { libraryOf } from '../../src/libraries/table.js';

type Run = Record<string, unknown> & { mode: string; clean: boolean; anomalies: number };

interface Verdict {
  expect: string;
  pass: boolean;
  modes: Record<
    string,
    { expected: string; pass: boolean; runs: number; misses: { queue: string; trial: number; anomalies: number; figures: Record<string, number> }[] }
  >;
}

interface Report {
  version: string;
  schema: number;
  runs: Run[];
  totals?: Run[];
  trials?: unknown[];
  verdict?: Verdict;
  error?: { exit: number; message: string };
}

/** The one JSON object on stdout, checked against the schema and for the header every object has. */
function parsed(result: CliResult, what: string): Report {
  const lines = result.stdout.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, `${what}: one line on stdout, got ${JSON.stringify(result.stdout)} (stderr ${result.stderr})`);
  const json = JSON.parse(lines[0] ?? '') as Report;
  assertMatchesSchema(json, what);
  assert.equal(json.version, VERSION);
  assert.equal(json.schema, JSON_SCHEMA);
  return json;
}

/** Each run's `clean` and `anomalies` agree with its own figures. */
function assertVerdictFields(runs: readonly Run[]): void {
  for (const run of runs) {
    const sum = ANOMALIES.reduce((total, name) => total + (typeof run[name] === 'number' ? (run[name] as number) : 0), 0);
    assert.equal(run.anomalies, sum, `${run.mode}: anomalies is the sum of its figures`);
    assert.equal(run.clean, sum === 0, `${run.mode}: clean exactly when no figure is above 0`);
  }
}

test('the schema is not vacuous: a missing field, a wrong type or an undocumented field fails it', () => {
  const good = reportJson({ server: { kind: 'redis', version: '7.0.15', url: 'redis://h:1' }, runs: [runResult()] });
  assertMatchesSchema(good);
  const run = good.runs[0];
  assert.ok(run);
  const { clean: _clean, ...withoutClean } = run;
  for (const [what, bad] of [
    ['a run without clean', { ...good, runs: [withoutClean] }],
    ['anomalies as a string', { ...good, runs: [{ ...run, anomalies: '0' }] }],
    ['an undocumented field', { ...good, runs: [{ ...run, surprise: 1 }] }],
    ['another schema number', { ...good, schema: 2 }],
    ['no version', { ...good, version: undefined }],
  ] as const) {
    assert.throws(() => assertMatchesSchema(JSON.parse(JSON.stringify(bad))), /does not match/, what);
  }
});

test('--json counts as asked for where it is a flag: not as the value of an option that takes one, not after --', () => {
  const program = new Command().option('--html <file>').option('--json').option('--keep');
  program.command('explain').option('--queue <name>').option('--json');
  const asks = (...words: string[]): boolean => asksForJson(program, ['node', 'emq-race', ...words]);
  assert.equal(asks('--json'), true);
  assert.equal(asks('--keep', '--json'), true);
  assert.equal(asks('--sweepers', 'many', '--json'), true, 'a flag refused before it still fails as JSON');
  assert.equal(asks('explain', '--queue', 'q', '--json'), true);
  // A flag right after an option that takes a value is a value left out, refused: as JSON.
  assert.equal(asks('--html', '--json'), true);
  assert.equal(asks('explain', '--queue', '--json'), true);
  assert.equal(asks('--html', 'out.html', '--keep'), false);
  assert.equal(asks('--keep', '--', '--json'), false);
  assert.equal(asks('--keep'), false);
});

test('a value left out before --json: the refusal is one JSON object on stdout, for every command', async () => {
  for (const args of [
    ['--url', '--json'],
    ['--jobs', '10', '--sweepers', '--json'],
    ['explain', '--url', '--json'],
    ['explore', '--mode', '--json'],
    ['grid', '--vary', '--json'],
  ]) {
    const result = await runCli(args);
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    const json = JSON.parse(result.stdout) as { error: { exit: number; message: string } };
    assert.equal(json.error.exit, 2);
    assert.match(json.error.message, /no value given: the flag --json follows it/, args.join(' '));
  }
});

describe('--json failures are one object on stdout with the exit code', () => {
  test('server unreachable: error.exit 3, exit code 3, no runs for jq -e to find', async () => {
    const result = await runCli(['--url', 'redis://127.0.0.1:1', '--json']);
    assert.equal(result.code, 3);
    const json = parsed(result, 'unreachable');
    assert.deepEqual(json.error, { exit: 3, message: 'cannot reach the server at redis://127.0.0.1:1: connection refused' });
    assert.equal(json.runs, undefined);
    assert.equal(result.stderr, 'emq-race: cannot reach the server at redis://127.0.0.1:1: connection refused\n', 'people still get their line');
  });

  test('usage errors, also those refused before commander reaches --json', async () => {
    for (const [args, message] of [
      [['--mode', 'atomic', '--expect', 'loop=race', '--json'], /^--expect loop=race: loop is not among the modes run/],
      [['--expect', 'clean', '--expect', 'race', '--json'], /^--expect: clean \(every run clean, loop too\) and race disagree on loop/],
      [['--sweepers', 'many', '--json'], /^--sweepers: "many" is not a whole number/],
      [['--json', '--no-such-flag'], /^unknown option '--no-such-flag'/],
      [['explain', '--json', '--counter', 'neither'], /^--counter: "neither" is not a form/],
    ] as const) {
      const result = await runCli(args);
      assert.equal(result.code, 2, args.join(' '));
      const json = parsed(result, args.join(' '));
      assert.equal(json.error?.exit, 2);
      assert.match(json.error?.message ?? '', message);
    }
  });

  test('without --json a failure prints nothing on stdout', async () => {
    const result = await runCli(['--url', 'redis://127.0.0.1:1']);
    assert.equal(result.code, 3);
    assert.equal(result.stdout, '');
  });
});

// The subject is the JSON the tool prints, which is the same whichever kind answered (the kind and
// version are fields read from it): one kind runs it, the figures are held to both elsewhere.
forOneServerKind(import.meta.url, 'json', (handle) => {
  test('a race with --expect per mode: header, clean and anomalies per run, the verdict per mode and overall', async () => {
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'atomic,loop',
      '--sweepers',
      '8',
      // Two hundred jobs: eight loop sweepers race on them every time, which is all --expect loop=race needs.
      '--jobs',
      '200',
      '--expect',
      'atomic=clean,loop=race',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const json = parsed(result, 'race');
    assertVerdictFields(json.runs);
    assert.deepEqual(
      json.runs.map((run) => [run.mode, run.clean]),
      [
        ['atomic', true],
        ['loop', false],
      ],
    );
    assert.ok(Number(json.runs[1]?.anomalies) > 0);
    assert.equal(json.verdict?.expect, 'atomic=clean,loop=race');
    assert.equal(json.verdict?.pass, true);
    assert.deepEqual(
      Object.entries(json.verdict?.modes ?? {}).map(([mode, v]) => [mode, v.expected, v.pass, v.runs, v.misses.length]),
      [
        ['atomic', 'clean', true, 1, 0],
        ['loop', 'race', true, 1, 0],
      ],
    );
  });

  test('--trials and --queues: every run and every totals row carries clean and anomalies', async () => {
    const result = await runCli(['--url', handle.url, '--mode', 'both', '--trials', '2', '--queues', '2', '--sweepers', '4', '--jobs', '200', '--json']);
    assert.equal(result.code, 0, result.stderr);
    const json = parsed(result, '--trials --queues');
    assert.equal(json.runs.length, 8);
    assert.equal(json.totals?.length, 4);
    assert.equal(json.trials?.length, 2);
    assert.equal(json.verdict, undefined, 'no --expect, no verdict');
    assertVerdictFields([...json.runs, ...(json.totals ?? [])]);
    for (const total of json.totals ?? []) {
      const queues = json.runs.filter((run) => run.mode === total.mode && run.trial === total.trial);
      assert.equal(
        total.anomalies,
        queues.reduce((sum, run) => sum + run.anomalies, 0),
      );
    }
    // Two queues raced side by side on one server: its script time is theirs together, no one's per job.
    for (const run of [...json.runs, ...(json.totals ?? [])]) assert.equal(run.serverUsPerJob, null, `${run.mode} ${run.queue}`);
  });

  test('workers, observer, faults and live leases: the fields they add are in the schema', async () => {
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'atomic,loop',
      '--jobs',
      '200',
      '--live',
      '10',
      '--workers',
      '2',
      '--observe',
      '--fault',
      'sweeper-crash',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const json = parsed(result, 'consequences');
    assertVerdictFields(json.runs);
    for (const run of json.runs)
      for (const field of ['workers', 'executions', 'samples', 'windowInNeither', 'faults', 'crashes']) assert.ok(field in run, `${run.mode}: ${field}`);
  });

  test('every mode of the strategy table, raced by name, each library apart, matches the schema', async () => {
    const script = scriptFile('sweep-stalled.lua', BUILT_IN_SCRIPT);
    // Every mode by name: `--mode all` leaves out the library modes, which need the library
    // installed (here a devDependency) and run one library at a time.
    const groups = [
      modes().filter((mode) => mode !== 'script' && libraryOf(mode) === undefined),
      ...LIBRARY_NAMES.map((library) => modes().filter((mode) => libraryOf(mode) === library)),
    ];
    const raced: string[] = [];
    for (const [at, group] of groups.entries()) {
      const result = await runCli([
        '--url',
        handle.url,
        '--mode',
        group.join(','),
        ...(at === 0 ? ['--script', script] : []),
        '--sweepers',
        '2',
        '--jobs',
        '100',
        '--json',
      ]);
      assert.equal(result.code, 0, result.stderr);
      const json = parsed(result, `modes ${group.join(',')}`);
      assertVerdictFields(json.runs);
      raced.push(...json.runs.map((run) => run.mode));
    }
    assert.deepEqual(raced.sort(), [...modes()].sort());
  });

  test('--expect race with a script that leaves duplicates: exit 1, and the JSON says which mode missed with which figures', async () => {
    const script = scriptFile('forgets-zrem.lua', FORGETS_ZREM);
    const result = await runCli(['--url', handle.url, '--mode', 'loop', '--script', script, '--sweepers', '4', '--jobs', '200', '--expect', 'race', '--json']);
    assert.equal(result.code, 1, result.stderr);
    const json = parsed(result, 'dirty script');
    assertVerdictFields(json.runs);
    assert.equal(json.verdict?.pass, false);
    const missed = json.verdict?.modes.script;
    assert.equal(missed?.expected, 'clean');
    assert.equal(missed?.pass, false);
    const run = json.runs.find((r) => r.mode === 'script');
    assert.deepEqual(missed?.misses, [
      {
        queue: run?.queue,
        trial: 1,
        anomalies: run?.anomalies,
        figures: Object.fromEntries(ANOMALIES.filter((name) => Number(run?.[name]) > 0).map((name) => [name, run?.[name]])),
      },
    ]);
    assert.ok(Number(missed?.misses[0]?.figures.duplicatePending) > 0);
    assert.equal(json.verdict?.modes.loop?.pass, true);
    assert.match(
      result.stderr,
      new RegExp(`^emq-race: --expect race missed: script expected clean, but showed .*duplicatePending ${String(run?.duplicatePending)}`),
    );
  });

  test('explain --json, both replays and the counter race, carry the header and match the schema', async () => {
    for (const args of [['explain'], ['explain', '--mode', 'atomic'], ['explain', '--counter', 'in-script'], ['explain', '--counter', 'client']]) {
      const result = await runCli([...args, '--url', handle.url, '--json']);
      assert.equal(result.code, 0, result.stderr);
      parsed(result, args.join(' '));
    }
  });
});
