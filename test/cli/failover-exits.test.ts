/**
 * --fault failover's own primary and replica on every way out of the process: Ctrl-C (SIGINT) once
 * the pair runs, the tool killed outright (SIGKILL), and a keeper of the pair (or of its Sentinel)
 * killed from outside, mid-run or as it starts. Every way, no server or keeper of the run is left,
 * nor a data folder; a killed keeper ends the run with its own line and exit 3.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { oneErrorLine, startCli, until, within, type RunningCli } from '../helpers/cli-process.js';
import { alive, askServer, childrenOf, commandLine, descendants, groupOf, threadChildren } from '../helpers/processes.js';
import { oneServerKind } from '../helpers/servers.js';

const LIMIT_MS = 30_000;

/** A drill slow enough to be caught mid-run: every sweep call waits for its replica. */
const SLOW_DRILL = ['--mode', 'atomic', '--fault', 'failover', '--failover-after', '3', '--wait-replicas', '1:1000', '--jobs', '2000', '--batch', '10'];

const QUEUE = 'race-failover-exits';

/** How often a wait of seconds (a pair's start, a run's end) looks again: each look reads /proc. */
const LOOK_MS = 20;

/**
 * A drill of one pair, busy for many seconds: the loop, a pause between its probe and its move. A
 * test kills it once it sweeps; however late a busy machine lets the test see that, it still runs.
 */
const LOOP_DRILL = [
  '--queue',
  QUEUE,
  '--mode',
  'loop',
  '--fault',
  'failover',
  '--failover-after',
  '3',
  '--jobs',
  '6000',
  '--batch',
  '10',
  '--probe-delay',
  '5',
];

/** Once the session's server and the pair's two run (three keepers, three servers; four with a Sentinel): every process and folder of the run. */
async function runningPair(cli: RunningCli, expected = 3): Promise<{ pids: number[]; dirs: string[] }> {
  let pids: number[] = [];
  // Counted by their keepers and by servers that listen (`--port`): the pair's start also runs a
  // short-lived `redis-server --version`, which is no server of the run.
  await until(
    LIMIT_MS,
    'the pair to start',
    () => {
      pids = descendants(cli.child.pid ?? 0);
      const lines = pids.map(commandLine);
      const keepers = lines.filter((line) => /server-keeper\.sh /.test(line)).length;
      const servers = lines.filter((line) => /^\S*(redis|valkey)-server /.test(line) && !/ --version\b/.test(line)).length;
      return keepers >= expected && servers >= expected;
    },
    LOOK_MS,
  );
  const dirs = dataDirs(pids);
  assert.ok(dirs.length >= expected, `keepers: ${pids.map(commandLine).join('; ')}`);
  return { pids, dirs };
}

/** The data folders of the keepers among `pids`. */
const dataDirs = (pids: number[]): string[] => pids.flatMap((pid) => /server-keeper\.sh (\S+)/.exec(commandLine(pid))?.[1] ?? []);

/** A failed wait's way out: the CLI killed, so that its keepers stop the rest, and the failure passed on. */
function killed(cli: RunningCli): (err: unknown) => never {
  return (err) => {
    cli.child.kill('SIGKILL');
    throw err;
  };
}

/** The primary's keeper: the one whose server gets the primary's own setting. */
const PRIMARY = / --repl-diskless-sync-delay /;

interface Keeper {
  readonly pid: number;
  readonly line: string;
  /** The port its server was given. */
  readonly port: number;
}

/**
 * The keepers the tool runs now: its own children, each command line read once. A keeper's fork
 * shows the keeper's command line until it becomes the server (or the lifeline), so a second read
 * may find another command, or none, and a port of NaN.
 */
function toolKeepers(cli: RunningCli): Keeper[] {
  return childrenOf(cli.child.pid ?? 0)
    .map((pid) => ({ pid, line: commandLine(pid) }))
    .filter(({ line }) => /server-keeper\.sh /.test(line))
    .map(({ pid, line }) => ({ pid, line, port: Number(/ --port (\d+) /.exec(line)?.[1]) }))
    .filter(({ port }) => port > 0);
}

/** The keeper the tool runs now whose command line matches `args`. */
function keeperOf(cli: RunningCli, args: RegExp): Keeper {
  const found = toolKeepers(cli).find(({ line }) => args.test(line));
  assert.ok(
    found,
    `a keeper matching ${String(args)}: ${descendants(cli.child.pid ?? 0)
      .map(commandLine)
      .join('; ')}`,
  );
  return found;
}

/**
 * Once the sweepers run (jobs back in `pending`, read on the replica, so the pair is up and in
 * sync), the replica's keeper. The replica starts as a plain server, made one by REPLICAOF: of the
 * keepers with neither the primary's setting nor a Sentinel's (the session's server's and the
 * replica's), the one whose server answers as a replica. The keepers are read again at every look:
 * a server that lost its free port to another process between the tool's probe and its bind is
 * started again on another port, by another keeper, and the first may have been seen meanwhile.
 */
async function sweepingReplica(cli: RunningCli): Promise<Keeper> {
  // The replica, once one answered as such: a failover after it may have promoted it since.
  let replica: Keeper | undefined;
  await until(
    LIMIT_MS,
    'the replica, its sweepers running',
    async () => {
      if (cli.child.exitCode !== null || cli.child.signalCode !== null) throw new Error(`the run ended before its replica was seen sweeping:\n${cli.stderr()}`);
      for (const keeper of replica ? [] : toolKeepers(cli).filter(({ line }) => !PRIMARY.test(line) && !/ --sentinel /.test(line))) {
        if ((await askServer(keeper.port, (server) => server.info('replication')))?.match(/^role:slave/m)) replica = keeper;
      }
      return replica !== undefined && ((await askServer(replica.port, (server) => server.llen(`emq:{${QUEUE}}:pending`))) ?? 0) > 0;
    },
    10,
  );
  assert.ok(replica);
  return replica;
}

/** The processes in process group `pgid`: what a keeper leaves behind if its server outlives it. */
function groupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry) && groupOf(Number(entry)) === pgid)
    .map(Number);
}

/**
 * Kills `keeper` (SIGKILL) and checks the end: exit 3 with the keeper's own line, naming its
 * server's port, then no process or folder of the run left, and nothing left in the keeper's
 * process group (its server among them, pid reported to the tool or not).
 */
async function killKeeper(
  cli: RunningCli,
  seen: { pids: number[]; dirs: string[] },
  keeper: { pid: number; port: number },
  role = { name: 'the embedded server', short: 'its server' },
): Promise<void> {
  // What runs now as well as what was seen first (a server started again on another port, say).
  const now = descendants(cli.child.pid ?? 0);
  const run = { pids: [...new Set([...seen.pids, ...now])], dirs: [...new Set([...seen.dirs, ...dataDirs(now)])] };
  process.kill(keeper.pid, 'SIGKILL');
  const result = await within(LIMIT_MS, 'the run after the keeper died', cli.done);
  assert.equal(result.code, 3, result.stderr);
  assert.equal(
    oneErrorLine(result.stderr),
    `emq-race: ${role.name}'s keeper process died (SIGKILL); the tool stopped ${role.short} at redis://127.0.0.1:${keeper.port} itself`,
    result.stderr,
  );
  await assertNothingLeft(run);
  await until(LIMIT_MS, "every process of the keeper's group to end", () => groupMembers(keeper.pid).length === 0, LOOK_MS);
}

async function assertNothingLeft(run: { pids: number[]; dirs: string[] }): Promise<void> {
  await until(LIMIT_MS, 'every process of the run to end', () => run.pids.every((pid) => !alive(pid)), LOOK_MS);
  for (const dir of run.dirs) assert.ok(!existsSync(dir), `data folder left: ${dir}`);
}

// The subject is the tool's own processes on the way out, the same on either server kind: one kind per file (oneServerKind).
for (const kind of oneServerKind(import.meta.url)) {
  describe(`failover drill's servers on the way out [${kind.kind}]`, { skip: which(kind.bin) === undefined ? `${kind.bin} is not installed` : false }, () => {
    test('SIGINT once the pair runs: exit 130, no server, keeper or folder left', async () => {
      const cli = startCli(['--server-bin', kind.bin, ...SLOW_DRILL]);
      const run = await runningPair(cli).catch(killed(cli));
      cli.child.kill('SIGINT');
      const result = await within(LIMIT_MS, 'the interrupted run', cli.done);
      assert.equal(result.code, 130, result.stderr);
      await assertNothingLeft(run);
    });

    test('--sentinel, SIGINT once the primary is killed, while Sentinel promotes: exit 130 at once with the one line, nothing left', async () => {
      const cli = startCli(['--server-bin', kind.bin, ...SLOW_DRILL, '--sentinel']);
      const run = await runningPair(cli, 4).catch(killed(cli));
      // The primary's server: the one the drill kills (SIGKILL) before Sentinel elects the replica.
      const primary = childrenOf(keeperOf(cli, PRIMARY).pid)[0];
      assert.ok(primary !== undefined, 'the primary under its keeper');
      await until(LIMIT_MS, 'the primary killed', () => !alive(primary), LOOK_MS).catch(killed(cli));
      cli.child.kill('SIGINT');
      // Sentinel takes seconds to promote; the run must not wait for it, nor for its held link.
      const result = await within(LIMIT_MS, 'the interrupted drill', cli.done);
      assert.equal(result.code, 130, result.stderr);
      assert.equal(oneErrorLine(result.stderr), 'emq-race: interrupted by SIGINT', 'no keys left to name: the pair goes with the run');
      await assertNothingLeft(run);
    });

    test('the tool killed (SIGKILL) once the pair runs: its keepers stop both servers and remove their folders', async () => {
      const cli = startCli(['--server-bin', kind.bin, ...SLOW_DRILL]);
      const run = await runningPair(cli).catch(killed(cli));
      cli.child.kill('SIGKILL');
      await within(LIMIT_MS, 'the killed run', cli.done);
      await assertNothingLeft(run);
    });

    test('--sentinel, the tool killed (SIGKILL) once the pair and its Sentinel run: the keepers stop all three and remove their folders', async () => {
      const cli = startCli(['--server-bin', kind.bin, ...SLOW_DRILL, '--sentinel']);
      const run = await runningPair(cli, 4).catch(killed(cli));
      assert.ok(
        run.pids.some((pid) => / --sentinel /.test(commandLine(pid))),
        'a Sentinel among the processes',
      );
      cli.child.kill('SIGKILL');
      await within(LIMIT_MS, 'the killed run', cli.done);
      await assertNothingLeft(run);
    });

    test("the replica's keeper killed from outside mid-run: exit 3 with the keeper's line, nothing left", async () => {
      const cli = startCli(['--server-bin', kind.bin, ...LOOP_DRILL]);
      const run = await runningPair(cli).catch(killed(cli));
      const replica = await sweepingReplica(cli).catch(killed(cli));
      await killKeeper(cli, run, replica);
    });

    test("the replica's server killed (SIGKILL) mid-run: exit 3 with a line naming the replica, nothing left", async () => {
      const cli = startCli(['--server-bin', kind.bin, ...LOOP_DRILL]);
      const run = await runningPair(cli).catch(killed(cli));
      const replica = await sweepingReplica(cli).catch(killed(cli));
      const server = descendants(cli.child.pid ?? 0).find((pid) => new RegExp(`-server 127\\.0\\.0\\.1:${replica.port}\\b`).test(commandLine(pid)));
      assert.ok(server, "the replica's server process");
      process.kill(server, 'SIGKILL');
      const result = await within(LIMIT_MS, 'the run after the replica died', cli.done);
      assert.equal(result.code, 3, result.stderr);
      // Promoted meanwhile on a slow machine, it is named so: either way, the replica.
      assert.match(
        oneErrorLine(result.stderr) ?? '',
        new RegExp(
          `^emq-race: the failover drill's (promoted )?replica \\(redis://127\\.0\\.0\\.1:${replica.port}\\) died during the run \\(its process ended unasked\\)$`,
        ),
        result.stderr,
      );
      await assertNothingLeft(run);
    });

    test("the promoted replica's server killed (SIGKILL) after the failover: exit 3 with a line naming the promoted replica, nothing left", async () => {
      const cli = startCli(['--server-bin', kind.bin, ...LOOP_DRILL]);
      const run = await runningPair(cli).catch(killed(cli));
      const replica = await sweepingReplica(cli).catch(killed(cli));
      await until(
        LIMIT_MS,
        'the replica, promoted',
        async () => /^role:master/m.test((await askServer(replica.port, (server) => server.info('replication'))) ?? ''),
        LOOK_MS,
      ).catch(killed(cli));
      const server = descendants(cli.child.pid ?? 0).find((pid) => new RegExp(`-server 127\\.0\\.0\\.1:${replica.port}\\b`).test(commandLine(pid)));
      assert.ok(server, "the promoted replica's server process");
      process.kill(server, 'SIGKILL');
      const result = await within(LIMIT_MS, 'the run after the promoted replica died', cli.done);
      assert.equal(result.code, 3, result.stderr);
      assert.equal(
        oneErrorLine(result.stderr),
        `emq-race: the failover drill's promoted replica (redis://127.0.0.1:${replica.port}) died during the run (its process ended unasked)`,
        result.stderr,
      );
      await assertNothingLeft(run);
    });

    // Before the race the primary is watched as the replica is: killed while the replica still
    // syncs (a lag of 300 ms each way holds the sync for seconds), the run once waited for that
    // sync without end, its 10 s bound lost to garbage collection on Node 20.
    test("the primary's server killed (SIGKILL) while its replica syncs: exit 3 with a line naming the primary, nothing left", async () => {
      const cli = startCli(['--server-bin', kind.bin, ...LOOP_DRILL, '--replica-lag', '300']);
      const run = await runningPair(cli).catch(killed(cli));
      let syncing = false;
      await until(
        LIMIT_MS,
        'the replica, syncing',
        async () => {
          for (const keeper of toolKeepers(cli).filter(({ line }) => !PRIMARY.test(line))) {
            const replication = await askServer(keeper.port, (server) => server.info('replication'));
            if (!replication?.match(/^role:slave/m)) continue;
            syncing = /^master_link_status:down/m.test(replication);
            return true;
          }
          return false;
        },
        LOOK_MS,
      ).catch(killed(cli));
      assert.ok(syncing, 'the replica was still syncing when seen');
      const primary = keeperOf(cli, PRIMARY);
      const server = descendants(cli.child.pid ?? 0).find((pid) => new RegExp(`-server 127\\.0\\.0\\.1:${primary.port}\\b`).test(commandLine(pid)));
      assert.ok(server, "the primary's server process");
      const pids = [...new Set([...run.pids, ...descendants(cli.child.pid ?? 0)])];
      process.kill(server, 'SIGKILL');
      const result = await within(LIMIT_MS, 'the run after the primary died', cli.done);
      assert.equal(result.code, 3, result.stderr);
      assert.equal(
        oneErrorLine(result.stderr),
        `emq-race: the failover drill's primary (redis://127.0.0.1:${primary.port}) died during the run (its process ended unasked)`,
        result.stderr,
      );
      await assertNothingLeft({ pids, dirs: run.dirs });
    });

    // Killed as soon as it is seen, a keeper of the pair dies before its server is spawned, between
    // the spawn and its report of the server's pid, or once the server is up: each a way out of its
    // own (the second once left the server running, orphaned, the tool waiting on its output pipes
    // for ever; the first had the tool start another and go on).
    test("the primary's keeper killed from outside as the pair starts: exit 3 with the keeper's line, nothing left", async () => {
      const cli = startCli(['--server-bin', kind.bin, ...LOOP_DRILL]);
      // Looked for every 5 ms among the children of the tool's main thread (which spawns every
      // keeper), the whole tree read once it is there: one small read a look, and the kill lands
      // within a few ms of the keeper's start.
      const cliPid = cli.child.pid ?? 0;
      const spawnedByMain = (): number[] => threadChildren(cliPid, cliPid);
      await until(LIMIT_MS, "the primary's keeper", () => spawnedByMain().some((pid) => PRIMARY.test(commandLine(pid))), 5).catch(killed(cli));
      const pids = descendants(cliPid);
      const dirs = dataDirs(pids);
      await killKeeper(cli, { pids, dirs }, keeperOf(cli, PRIMARY));
    });

    test("the primary's keeper killed from outside mid-run: exit 3 with the keeper's line, nothing left", async () => {
      // The cut only once the sweeps run dry: the primary is still the primary when its keeper is killed.
      const late = LOOP_DRILL.map((arg, i) => (LOOP_DRILL[i - 1] === '--failover-after' ? '1000000' : arg));
      const cli = startCli(['--server-bin', kind.bin, ...late]);
      const run = await runningPair(cli).catch(killed(cli));
      await sweepingReplica(cli).catch(killed(cli));
      await killKeeper(cli, run, keeperOf(cli, PRIMARY));
    });

    test("--sentinel, the Sentinel's keeper killed from outside mid-run: exit 3 with the keeper's line, nothing left", async () => {
      const cli = startCli(['--server-bin', kind.bin, ...LOOP_DRILL, '--sentinel']);
      const run = await runningPair(cli, 4).catch(killed(cli));
      await sweepingReplica(cli).catch(killed(cli));
      await killKeeper(cli, run, keeperOf(cli, / --sentinel /), { name: "the failover drill's Sentinel", short: 'the Sentinel' });
    });
  });
}
