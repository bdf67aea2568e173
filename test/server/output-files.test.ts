/**
 * Two output flags of one command naming one file: refused with one line naming both flags and the
 * path, exit 2, before the server is so much as connected to, and no file written. Paths are
 * compared where they lead: `x`, `d/sub/../x` and `x` through a linked folder are one file.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { which } from '../../src/server/embedded-server.js';
import { JSON_SCHEMA } from '../../src/report/json.js';
import { VERSION } from '../../src/shared/model.js';
import { runCli } from '../helpers/cli.js';
import { oneErrorLine } from '../helpers/cli-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { BUILT_IN_SCRIPT } from '../helpers/scripts.js';
import { filledServer, unrelatedState } from '../helpers/unrelated-data.js';

const kind = which('redis-server') ? 'redis-server' : which('valkey-server') ? 'valkey-server' : undefined;

/** Connections the server has accepted since it started: a command that never connected leaves it as it was. */
async function connectionsReceived(redis: Redis): Promise<number> {
  return Number(/^total_connections_received:(\d+)/m.exec(await redis.info('stats'))?.[1]);
}

interface Clash {
  readonly what: string;
  /** The command line, given the test's folder. */
  readonly args: (dir: string) => string[];
  /** The words the line must hold, given the test's folder: both flags and the path. */
  readonly says: (dir: string) => string[];
}

const CLASHES: readonly Clash[] = [
  {
    what: 'explain --html and --svg on one file',
    args: (dir) => ['explain', '--mode', 'atomic', '--html', join(dir, 'ex.html'), '--svg', join(dir, 'ex.html')],
    says: (dir) => [`--html and --svg both name ${join(dir, 'ex.html')}`],
  },
  {
    what: 'the race: --export-test and --html on one file, one of them written as d/sub/../x',
    args: (dir) => [
      '--mode',
      'loop',
      '--seed',
      '7',
      '--jobs',
      '200',
      '--sweepers',
      '4',
      '--export-test',
      join(dir, 'same.mjs'),
      '--html',
      `${dir}/sub/../same.mjs`,
    ],
    says: (dir) => [`--html and --export-test both name ${join(dir, 'same.mjs')}`],
  },
  {
    what: 'the race under --json: the same line, and the error object on stdout',
    args: (dir) => ['--mode', 'loop', '--seed', '7', '--export-test', join(dir, 'same.mjs'), '--html', join(dir, 'same.mjs'), '--json'],
    says: (dir) => ['--html', '--export-test', join(dir, 'same.mjs')],
  },
  {
    what: 'explain: one file through a linked folder',
    args: (dir) => ['explain', '--html', join(dir, 'real', 'page.html'), '--svg', join(dir, 'link', 'page.html')],
    says: (dir) => [`--html (${join(dir, 'real', 'page.html')}) and --svg (${join(dir, 'link', 'page.html')}) name one file`],
  },
];

describe('output files named twice', { skip: kind ? false : 'no redis-server or valkey-server installed' }, () => {
  const filled = filledServer({ bin: kind ?? 'redis-server' });

  for (const clash of CLASHES) {
    test(clash.what, async () => {
      const dir = tempDir('emq-outputs-');
      mkdirSync(join(dir, 'real'));
      symlinkSync(join(dir, 'real'), join(dir, 'link'));
      const connections = await connectionsReceived(filled.redis);
      const args = clash.args(dir);
      const result = await runCli([...args, '--url', filled.server.url]);
      assert.equal(result.code, 2, result.stderr);
      const line = oneErrorLine(result.stderr);
      assert.ok(line, `one error line, got: ${result.stderr}`);
      assert.equal(result.stderr, `${line}\n`);
      for (const words of clash.says(dir)) assert.ok(line.includes(words), `${JSON.stringify(line)} should say ${JSON.stringify(words)}`);
      const json = args.includes('--json')
        ? `${JSON.stringify({ version: VERSION, schema: JSON_SCHEMA, error: { exit: 2, message: line.replace(/^emq-race: /, '') } })}\n`
        : '';
      assert.equal(result.stdout, json);
      // Nothing written, and the server never connected to, let alone written.
      assert.deepEqual(readdirSync(dir).sort(), ['link', 'real']);
      assert.deepEqual(readdirSync(join(dir, 'real')), []);
      assert.equal(await connectionsReceived(filled.redis), connections, 'the command connected to the server');
      assert.deepEqual(await unrelatedState(filled.redis), filled.initial);
    });
  }

  test('an output naming the file --script reads (through a linked folder) is refused, and the script is left as it was', async () => {
    const dir = tempDir('emq-outputs-');
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const script = join(dir, 'real', 'sweep.lua');
    writeFileSync(script, BUILT_IN_SCRIPT);
    const connections = await connectionsReceived(filled.redis);
    const result = await runCli(['--script', script, '--html', join(dir, 'link', 'sweep.lua'), '--url', filled.server.url]);
    assert.equal(result.code, 2, result.stderr);
    assert.equal(
      result.stderr,
      `emq-race: --html names ${join(dir, 'link', 'sweep.lua')}, the file --script reads: writing it would destroy it; give --html another file\n`,
    );
    assert.equal(readFileSync(script, 'utf8'), BUILT_IN_SCRIPT);
    assert.deepEqual(readdirSync(join(dir, 'real')), ['sweep.lua']);
    assert.equal(await connectionsReceived(filled.redis), connections, 'the command connected to the server');
  });
});
