/**
 * `--seed` on real servers: the seeded race gives the same counts and the same caught interleaving
 * for the same seed and flags, carries its seed in the JSON, lets every built-in mode run under it
 * (the atomic forms still clean), and refuses the flags it cannot order before anything is written.
 * `--shrink` ends at a witness of at most three switches that explain replays to the same anomaly,
 * and the test `--export-test` writes fails for the loop and passes once its first line names the
 * atomic sweep (run on one server kind: the replay it makes is explain's, run on both); an existing
 * file is never overwritten.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { Redis } from 'ioredis';
import { escapeMarkup } from '../../src/html/escape.js';
import { ANOMALIES, FIGURES } from '../../src/shared/model.js';
import { BIN, runCli, runProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { assertMatchesSchema } from '../helpers/json-schema.js';
import { allKeys } from '../helpers/keyspace.js';
import { forEachServer, oneServerKind } from '../helpers/servers.js';

interface SeededRun {
  mode: string;
  queue: string;
  clean: boolean;
  roundTrips: number;
  sweeps: number;
  example: { job: string; commands: { sweeper: number; command: string[]; reply: unknown }[]; evidence: string[] } | null;
  [field: string]: unknown;
}

interface SeededJson {
  seed?: number;
  runs: SeededRun[];
  shrink?: {
    mode: string;
    anomaly: string;
    outcome: string;
    steps: { stage: string; jobs: number; sweepers: number; seed: number; found: boolean }[];
    switches: number | null;
    command: string | null;
  };
}

interface ReplayJson {
  replays: { mode: string; readout: { recoverCount: number; pendingEntries: number; lostIncrements: number; extraIncrements: number } }[];
}

/** What a seeded run must give again: every figure, the round trips and sweeps, and the example's commands. */
function replayable(run: SeededRun): unknown {
  const figures = Object.fromEntries(FIGURES.map((figure) => [figure.field, run[figure.field]]));
  // A lease deadline is the server's clock at seeding: the one reply that differs between two runs.
  const example = run.example && {
    job: run.example.job,
    commands: run.example.commands.map((c) => ({
      sweeper: c.sweeper,
      command: c.command.map((word) => word.replace(run.queue, 'Q')),
      reply: c.command[0] === 'ZSCORE' && c.reply !== null ? 'score' : c.reply,
    })),
    evidence: run.example.evidence,
  };
  return { figures, roundTrips: run.roundTrips, sweeps: run.sweeps, example };
}

/**
 * Where the exported file is run (node --test, which starts emq-race in turn: three processes a
 * run). Its replay is explain's, run here on both kinds just before; that the file fails for the
 * loop and passes for atomic is the file's own doing, the same on either server.
 */
const EXPORT_KIND = oneServerKind(import.meta.url)[0]?.kind;

forEachServer('--seed', (handle, kind) => {
  const seeded = async (seed: number, extra: readonly string[] = [], seen?: { stderr: string }): Promise<SeededJson> => {
    const args = ['--url', handle.url, '--mode', 'loop', '--seed', String(seed), '--jobs', '50', '--sweepers', '4', '--json', ...extra];
    const result = await runCli(args);
    assert.equal(result.code, 0, result.stderr);
    if (seen) seen.stderr = result.stderr;
    const json = JSON.parse(result.stdout) as SeededJson;
    assertMatchesSchema(json);
    return json;
  };
  // Seed 7 with --shrink and --export-test: its run is seed 7's run again (the shrinking comes after
  // it), so it is the second run of the same seed below as well as the shrink's test: one run for both.
  let shrunk: Promise<{ json: SeededJson; dir: string; file: string; page: string; stderr: string }> | undefined;
  const shrinkRun = () =>
    (shrunk ??= (async () => {
      const dir = tempDir('emq-race-seed-');
      const file = join(dir, 'witness.test.mjs');
      const seen = { stderr: '' };
      const page = join(dir, 'page.html');
      const json = await seeded(7, ['--shrink', '--export-test', file, '--html', page], seen);
      return { json, dir, file, page, stderr: seen.stderr };
    })());

  test('the same seed twice: the same counts and the same example; other seeds give other runs', async () => {
    const first = await seeded(7);
    const again = (await shrinkRun()).json;
    assert.equal(first.seed, 7);
    const [run] = first.runs;
    assert.ok(run);
    assert.ok(
      ANOMALIES.some((name) => Number(run[name]) > 0),
      'the seeded loop raced',
    );
    assert.ok(run.example, 'a raced job is shown');
    assert.deepEqual(replayable(again.runs[0] as SeededRun), replayable(run));
    // That the seed decides the run: another seed, the same flags, another run. A seeded run is the
    // same every time (as just shown), so one other seed that differs differs every time.
    const other = JSON.stringify(replayable((await seeded(8)).runs[0] as SeededRun));
    assert.notEqual(other, JSON.stringify(replayable(run)), 'seed 8 ran exactly as seed 7');
  });

  test("the example is the server's own order, as MONITOR saw it: one command in flight, each logged as its reply came", async () => {
    const client = new Redis(handle.url);
    // Ready first: the client's own ready check (an INFO) run as MONITOR starts could reach the
    // monitor connection in the same packet as MONITOR's OK, before ioredis has switched it to
    // monitoring, and ioredis then fails with "Command queue state error".
    await client.ping();
    const monitor = await client.monitor();
    const seen: string[][] = [];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      // The seeding's and the audit's commands run inside scripts: the sweepers' come from clients.
      if (source !== 'lua') seen.push(args);
    });
    let json: SeededJson;
    try {
      json = await seeded(7);
    } finally {
      monitor.disconnect();
      client.disconnect();
    }
    const run = json.runs[0];
    assert.ok(run?.example, 'a raced job is shown');
    const { job } = run.example;
    assert.equal((run.example as { serial?: boolean }).serial, true);
    // The sweepers' own commands (the clean-up's UNLINK names every job too).
    const names = new Set(run.example.commands.map((c) => c.command[0]?.toUpperCase()));
    const ofJob = (args: readonly string[]) =>
      names.has(args[0]?.toUpperCase()) && (args[1] === `emq:{${run.queue}}:job:${job}` || (args[1]?.startsWith(`emq:{${run.queue}}:`) && args[2] === job));
    const order = (commands: readonly (readonly string[])[]) => commands.filter(ofJob).map(([name, ...rest]) => [name?.toUpperCase(), ...rest].join(' '));
    assert.deepEqual(order(run.example.commands.map((c) => c.command)), order(seen), 'every command of the job, in the order the server ran them');
  });

  test('every built-in mode runs seeded; only the loop races', async () => {
    const result = await runCli([
      '--url',
      handle.url,
      '--mode',
      'atomic,loop,watch,claim,function',
      '--seed',
      '3',
      '--jobs',
      '80',
      '--sweepers',
      '3',
      '--json',
    ]);
    assert.equal(result.code, 0, result.stderr);
    const json = JSON.parse(result.stdout) as SeededJson;
    assertMatchesSchema(json);
    assert.deepEqual(
      json.runs.map((run) => [run.mode, run.clean]),
      [
        ['atomic', true],
        ['loop', false],
        ['watch', true],
        ['claim', true],
        ['function', true],
      ],
    );
    const text = await runCli(['--url', handle.url, '--mode', 'atomic', '--seed', '3', '--jobs', '20']);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^seed: 3 \(/m);
  });

  test('flags a seed cannot order: one line, exit 2, nothing written', async () => {
    const refused: [string[], RegExp][] = [
      [['--seed', '1', '--processes'], /^emq-race: --seed .*--processes\n$/],
      [['--seed', '1', '--workers', '2'], /^emq-race: --seed cannot go with --workers/],
      [['--seed', '1', '--cycles', '2'], /^emq-race: --seed cannot go with --cycles/],
      [['--seed', '1', '--observe'], /^emq-race: --seed cannot go with --observe/],
      [['--seed', '1', '--fault', 'sweeper-crash'], /^emq-race: --seed cannot go with --fault/],
      [['--seed', '1', '--trials', '3'], /^emq-race: --seed makes every trial the same run/],
      [['--seed', '1', '--queues', '2'], /^emq-race: --seed orders one queue per mode/],
      [['--seed', '1', '--lib', 'bullmq'], /^emq-race: --seed orders the tool's own sweepers/],
      [['--seed', '4294967296'], /^emq-race: --seed: 4294967296 is out of range/],
      [['--seed', 'seven'], /^emq-race: --seed: "seven" is not a whole number/],
      [['--shrink'], /^emq-race: --shrink: only with --seed/],
      [['--seed', '1', '--shrink', '--mode', 'atomic'], /^emq-race: --shrink: .*add --mode loop\n$/],
      [
        ['--seed', '1', '--export-test', 'w.test.mjs', '--pending', 'zset'],
        /^emq-race: --export-test: .*whose loop pushes onto a list: leave out --pending zset\n$/,
      ],
    ];
    const admin = new Redis(handle.url);
    try {
      for (const [args, line] of refused) {
        const result = await runCli(['--url', handle.url, '--queue', 'seed-refused', ...args]);
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
        assert.match(result.stderr, line);
        assert.equal(result.stderr.split('\n').length, 2, result.stderr);
        assert.equal(result.stdout, '');
      }
      assert.deepEqual(await allKeys(admin), []);
    } finally {
      admin.disconnect();
    }
  });

  test('--export-test when no loop run raced: the report, then one line, exit 1, nothing written; --shrink alone says so and goes on', async () => {
    const dir = tempDir('emq-race-seed-none-');
    const file = join(dir, 'none.test.mjs');
    // One sweeper cannot race: nothing to shrink under any seed.
    const args = ['--url', handle.url, '--mode', 'loop', '--seed', '3', '--sweepers', '1', '--jobs', '20'];
    const missed = `emq-race: --export-test: no loop run found an anomaly under seed 3: nothing to shrink (try another seed); nothing written to ${file}`;
    const exported = await runCli([...args, '--export-test', file]);
    assert.equal(exported.code, 1, exported.stderr);
    assert.equal(exported.stderr.split('\n').filter(Boolean).join('\n'), missed);
    // The runs made are evidence still: their table is printed, as a missed --expect's is.
    assert.match(exported.stdout, /^recoveries +20$/m);
    assert.equal(existsSync(file), false);
    // Under --json, the report a script reads (a miss is no failed command: no error object), and the same line.
    const asJson = await runCli([...args, '--export-test', file, '--json']);
    assert.equal(asJson.code, 1, asJson.stderr);
    assert.equal(asJson.stderr.split('\n').filter(Boolean).join('\n'), missed);
    const report = JSON.parse(asJson.stdout);
    assertMatchesSchema(report);
    assert.equal(report.error, undefined);
    assert.equal(report.runs.length, 1);
    assert.equal(existsSync(file), false);
    const shrunk = await runCli([...args, '--shrink']);
    assert.equal(shrunk.code, 0, shrunk.stderr);
    assert.match(shrunk.stderr, /^emq-race: --shrink: no loop run found an anomaly under seed 3: nothing to shrink \(try another seed\)$/m);
  });

  test('--shrink ends at a witness of at most 3 switches that explain replays; --export-test writes it as a test that fails for the loop only', async () => {
    const { json, dir, file, page, stderr } = await shrinkRun();
    // Where the test went, on stderr as the page's line goes under --json: stdout holds the JSON alone.
    assert.ok(stderr.split('\n').includes(`exported test: ${file}`), `no "exported test:" line on stderr: ${stderr}`);
    const shrink = json.shrink;
    assert.ok(shrink, 'the JSON carries the shrink');
    assert.equal(shrink.mode, 'loop');
    assert.ok(Number((json.runs[0] as SeededRun)[shrink.anomaly]) > 0, `the kept figure, ${shrink.anomaly}, was in the seeded run`);
    assert.ok(
      shrink.steps.some((step) => step.stage === 'one-job' && step.jobs === 1 && step.sweepers === 2 && step.found),
      'one job and two sweeps kept it',
    );
    assert.ok(shrink.switches !== null && shrink.switches <= 3, `switches: ${shrink.switches}`);
    assert.ok(shrink.command?.startsWith('emq-race explain --mode loop --schedule '), String(shrink.command));

    // The page shows the same shrink: every seeded run made, whether it kept the anomaly, and the explain line.
    const html = readFileSync(page, 'utf8');
    const section = html.slice(html.indexOf('<section id="shrink">'), html.indexOf('</section>', html.indexOf('<section id="shrink">')));
    assert.ok(section.length > 0, 'the page has a shrink section');
    assert.equal([...section.matchAll(/<tr data-step="\d+">/g)].length, shrink.steps.length);
    assert.equal([...section.matchAll(/data-field="found">yes</g)].length, shrink.steps.filter((step) => step.found).length);
    assert.ok(section.includes(`<pre id="witness"><code>${escapeMarkup(shrink.command as string)}</code></pre>`), section);

    // The witness, replayed by explain, shows the anomaly the shrinking kept.
    const replay = await runCli([...(shrink.command as string).split(' ').slice(1), '--url', handle.url, '--json']);
    assert.equal(replay.code, 0, replay.stderr);
    const [replayed] = (JSON.parse(replay.stdout) as ReplayJson).replays;
    assert.ok(replayed);
    if (shrink.anomaly === 'lostIncrements') assert.ok(replayed.readout.lostIncrements > 0, JSON.stringify(replayed.readout));
    else assert.ok(replayed.readout.recoverCount > 1, JSON.stringify(replayed.readout));

    // The exported test, with emq-race on PATH as npm test puts a project's bins there.
    symlinkSync(BIN, join(dir, 'emq-race'));
    // NODE_TEST_CONTEXT would make the child report to this test runner rather than as a user's run does.
    const { NODE_TEST_CONTEXT: _context, ...inherited } = process.env;
    const env = { ...inherited, PATH: `${dir}:${process.env.PATH ?? ''}`, REDIS_URL: handle.url };
    const text = readFileSync(file, 'utf8');
    assert.match(text.split('\n')[0] ?? '', /^const MODE = 'loop';/);
    // What made it: the race's own line, every flag that shaped the run, the server left out.
    const made = /^\/\/ Made by emq-race \S+: (emq-race .*)$/m.exec(text)?.[1] ?? '';
    assert.match(made, /^emq-race --mode loop --sweepers 4 --jobs 50 .*--seed 7 --shrink .*--export-test /);
    // The file as the flag named it, folder and all: the line run again writes the same file.
    assert.ok(made.endsWith(` --export-test ${file}`), made);
    assert.doesNotMatch(made, /--url|redis:/);
    // The summary as Node's default reporter prints it off a terminal: TAP on Node 20 ("# fail 1"),
    // the spec reporter on Node 23 and later ("ℹ fail 1").
    const summary = (word: string) => new RegExp(`^(?:# |ℹ )${word} 1$`, 'm');
    if (kind.kind === EXPORT_KIND) {
      const racing = await runProcess(process.execPath, ['--test', file], { env, cwd: dir });
      assert.notEqual(racing.code, 0, 'the loop fails its own witness');
      assert.match(racing.stdout, summary('fail'));
    }
    writeFileSync(file, text.replace(/^const MODE = 'loop';/, "const MODE = 'atomic';"));
    if (kind.kind === EXPORT_KIND) {
      const fixed = await runProcess(process.execPath, ['--test', file], { env, cwd: dir });
      assert.equal(fixed.code, 0, fixed.stdout);
      assert.match(fixed.stdout, summary('pass'));
    }

    // Asked again, the file is left as it is: one line, exit 2, before any run.
    const again = await runCli(['--url', handle.url, '--mode', 'loop', '--seed', '7', '--jobs', '20', '--export-test', file]);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /^emq-race: --export-test: .*witness\.test\.mjs exists already; nothing was overwritten/);
    assert.equal(again.stdout, '');
    assert.equal(readFileSync(file, 'utf8'), text.replace(/^const MODE = 'loop';/, "const MODE = 'atomic';"));
  });
});
