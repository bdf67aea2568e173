/**
 * `--embedded-cluster` while its nodes join (`redis-cli --cluster create`): a Ctrl-C (the tool and
 * the cli both signalled, as the terminal signals its whole foreground group) ends with the
 * signal's exit code and line, and a node killed (SIGKILL) ends the run at once with exit 3 and one
 * line naming it, not after the joining's own long wait. A node killed once the run writes ends it
 * at once too, with exit 3 and one line, though the other nodes still answer, and --keep keeps
 * nothing of a cluster short of a node. The one embedded server killed while the run writes ends
 * it with its death's line, with or without --keep. Either way no node, keeper, cli or node folder
 * is left.
 */
import assert from 'node:assert/strict';
import { existsSync, readlinkSync } from 'node:fs';
import { describe, test } from 'node:test';
import { which } from '../../src/server/embedded-server.js';
import { oneErrorLine, startCli, until, within, type RunningCli } from '../helpers/cli-process.js';
import { alive, askServer, commandLine, descendants, killWithDescendants } from '../helpers/processes.js';
import { oneServerKind } from '../helpers/servers.js';

/** Guards against a hang, not timings. */
const LIMIT_MS = 20_000;

interface Joining {
  readonly cli: RunningCli;
  /** The `--cluster create` process. */
  readonly joiner: number;
  /** The nodes' servers, each with its folder. */
  readonly nodes: readonly { pid: number; dir: string }[];
  /** Every process below the tool at that moment. */
  readonly all: readonly number[];
}

const NODE = /^\S*(?:redis|valkey)-server 127\.0\.0\.1:(\d+)/;

/** A run with an embedded cluster of 3, caught while its nodes join. */
async function whileJoining(bin: string): Promise<Joining> {
  const cli = startCli(['--embedded-cluster', '3', '--server-bin', bin, '--mode', 'atomic', '--jobs', '100']);
  let joiner: number | undefined;
  await caught(cli, () =>
    until(
      LIMIT_MS,
      'the cluster create',
      () => (joiner = descendants(cli.child.pid ?? 0).find((pid) => /--cluster create/.test(commandLine(pid)))) !== undefined,
    ),
  );
  return { ...processesOf(cli), joiner: joiner ?? 0 };
}

/** The loop sweeps slowly enough that the run is still going when its node dies. */
const LONG_RACE = ['--mode', 'loop', '--jobs', '20000', '--loop-jobs', '20000'];

/**
 * A run with an embedded cluster of 3 (or, with `server` given, its flags: `[]` for the one
 * embedded server), caught once a node holds keys of its queue (seeding or racing).
 */
async function whileWriting(
  bin: string,
  server: readonly string[] = ['--embedded-cluster', '3'],
  command: readonly string[] = LONG_RACE,
): Promise<Omit<Joining, 'joiner'>> {
  const cli = startCli([...command, ...server, '--server-bin', bin]);
  const writing = async (): Promise<boolean> => {
    const ports = descendants(cli.child.pid ?? 0).flatMap((pid) => NODE.exec(commandLine(pid))?.[1] ?? []);
    for (const port of ports) if (((await askServer(Number(port), (server) => server.dbsize())) ?? 0) > 0) return true;
    return false;
  };
  await caught(cli, () => until(LIMIT_MS, 'a node holding keys of the run', writing, 20));
  return processesOf(cli);
}

/** `wait` (bounded) for a moment of the run; if it fails, the run is killed with everything below it. */
async function caught(cli: RunningCli, wait: () => Promise<unknown>): Promise<void> {
  try {
    await wait();
  } catch (err) {
    killWithDescendants(cli.child.pid ?? 0);
    throw err;
  }
}

/** Every process below the tool now, and its nodes with their folders. */
function processesOf(cli: RunningCli): Omit<Joining, 'joiner'> {
  const all = descendants(cli.child.pid ?? 0);
  const nodes = all
    .filter((pid) => NODE.test(commandLine(pid)))
    .flatMap((pid) => {
      try {
        return [{ pid, dir: readlinkSync(`/proc/${pid}/cwd`) }];
      } catch {
        return [];
      }
    });
  return { cli, nodes, all };
}

/** The end of the run: `code`, one line matching `says`, and nothing of the cluster (its `nodes` nodes) left. */
async function endsWith(run: Omit<Joining, 'joiner'>, code: number, says: RegExp, nodes = 3): Promise<void> {
  const result = await within(LIMIT_MS, 'the run', run.cli.done);
  assert.equal(result.code, code, result.stderr);
  assert.match(oneErrorLine(result.stderr) ?? result.stderr, says);
  assert.equal(run.nodes.length, nodes, `${nodes} node(s) were running`);
  await until(LIMIT_MS, 'every process of the run to end', () => run.all.every((pid) => !alive(pid)));
  for (const node of run.nodes) assert.equal(existsSync(node.dir), false, `the folder of node ${node.pid} is removed`);
}

const kind = oneServerKind(import.meta.url)[0];
const skip = kind === undefined || which(kind.bin) === undefined ? 'no server installed' : false;

describe(`--embedded-cluster while its nodes join [${kind?.kind ?? 'none'}]`, { skip }, () => {
  test('SIGINT (the tool and the cli, as a Ctrl-C): exit 130 saying so, no node, keeper or folder left', async () => {
    const run = await whileJoining(kind?.bin ?? '');
    process.kill(run.joiner, 'SIGINT');
    run.cli.child.kill('SIGINT');
    await endsWith(run, 130, /^emq-race: interrupted by SIGINT$/);
  });

  test('a node killed (SIGKILL): exit 3 naming it, no node, keeper or folder left', async () => {
    const run = await whileJoining(kind?.bin ?? '');
    const [victim] = run.nodes;
    assert.ok(victim, 'a node to kill');
    process.kill(victim.pid, 'SIGKILL');
    await endsWith(run, 3, /^emq-race: a node of the embedded cluster \(redis:\/\/127\.0\.0\.1:\d+\) died while the cluster was being created$/);
  });
  test('a node killed (SIGKILL) while the run writes: exit 3 naming it, no node, keeper or folder left', async () => {
    const run = await whileWriting(kind?.bin ?? '');
    const [victim] = run.nodes;
    assert.ok(victim, 'a node to kill');
    process.kill(victim.pid, 'SIGKILL');
    await endsWith(run, 3, /^emq-race: a node of the embedded cluster \(redis:\/\/127\.0\.0\.1:\d+\) died during the run$/);
  });
  // --keep keeps nothing of a cluster short of a node: its line names no node (the dead one's pid
  // may be another process's by then), and the nodes still running are stopped with their folders.
  test('a node killed while a --keep run writes: exit 3 naming it, nothing said kept, no node, keeper or folder left', async () => {
    const run = await whileWriting(kind?.bin ?? '', ['--embedded-cluster', '3', '--keep']);
    const [victim] = run.nodes;
    assert.ok(victim, 'a node to kill');
    process.kill(victim.pid, 'SIGKILL');
    await endsWith(run, 3, /^emq-race: a node of the embedded cluster \(redis:\/\/127\.0\.0\.1:\d+\) died during the run$/);
  });
});

describe(`the embedded server killed while the run writes [${kind?.kind ?? 'none'}]`, { skip }, () => {
  // Its death is the run's end, not the lost connection the run meets first; with --keep, nothing
  // is said to be kept (no `clean` for keys that went with it, no pid to kill).
  for (const keep of [false, true]) {
    test(`${keep ? 'with' : 'without'} --keep: exit 3 naming its death alone, no server, keeper or folder left`, async () => {
      const run = await whileWriting(kind?.bin ?? '', keep ? ['--keep'] : []);
      const [victim] = run.nodes;
      assert.ok(victim, 'a server to kill');
      process.kill(victim.pid, 'SIGKILL');
      await endsWith(run, 3, /^emq-race: the embedded server at redis:\/\/127\.0\.0\.1:\d+ died \(its process ended unasked\)$/, 1);
    });
  }
  // A report printed before the command ends (grid's cells so far, explore's modes) names the same
  // cause as its last line.
  for (const command of [
    ['grid', '--vary', 'sweepers=1,2,3,4', '--mode', 'atomic', '--jobs', '50000', '--json'],
    ['explore', '--sweeps', '3', '--max-switches', '3', '--json'],
  ]) {
    test(`${command[0]} --json: exit 3, the death on its last line and as what stopped the report, if one was printed`, async () => {
      const run = await whileWriting(kind?.bin ?? '', [], command);
      const [victim] = run.nodes;
      assert.ok(victim, 'a server to kill');
      process.kill(victim.pid, 'SIGKILL');
      const death = /^(emq-race: )?the embedded server at redis:\/\/127\.0\.0\.1:\d+ died \(its process ended unasked\)$/;
      await endsWith(run, 3, death, 1);
      const { stdout } = await run.cli.done;
      // Killed before any cell or mode was done, the command prints its error object alone.
      const printed = JSON.parse(stdout) as { stopped?: { message: string }; error?: { message: string } };
      assert.match(printed.stopped?.message ?? printed.error?.message ?? stdout, death);
    });
  }
});
