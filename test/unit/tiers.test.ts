/**
 * Every test file sits in one tier, so `npm run test:unit`, `test:server` and `test:cli` together
 * are the whole suite and `npm test` misses none: test/unit (no server), test/server (real Redis
 * and Valkey, the CLI in-process), test/cli (the process itself under test). A unit test starts no
 * server and no CLI: that is what keeps its tier quick.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const TEST = fileURLToPath(new URL('../../../test/', import.meta.url));
const TIERS = ['unit', 'server', 'cli'];
// The helpers that start a server, a session or the command line.
const SERVER_HELPERS =
  /from '\.\.\/helpers\/(servers|unrelated-data|session|acl|cli|cli-process|run-mode|proxy|browser)\.js'|embedded-server\.js'|node:child_process'/;

function testFiles(): string[] {
  return readdirSync(TEST, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => file.split(sep).join('/'));
}

test('every test file is in a tier folder: test/unit, test/server or test/cli', () => {
  const files = testFiles();
  assert.ok(files.length > 0, `no test files found under ${relative(process.cwd(), TEST)}`);
  const outside = files.filter((file) => !TIERS.some((tier) => file.startsWith(`${tier}/`) && !file.slice(tier.length + 1).includes('/')));
  assert.deepEqual(outside, [], 'move these into test/unit, test/server or test/cli (npm test runs only those)');
  for (const tier of TIERS)
    assert.ok(
      files.some((file) => file.startsWith(`${tier}/`)),
      `the ${tier} tier has tests`,
    );
});

test('a unit test imports nothing that starts a server, a session or a process', () => {
  // This file names those imports in its pattern, and imports none of them.
  const unit = testFiles().filter((file) => file.startsWith('unit/') && file !== 'unit/tiers.test.ts');
  const starting = unit.filter((file) => SERVER_HELPERS.test(readFileSync(join(TEST, file), 'utf8')));
  assert.deepEqual(starting, [], 'these belong in test/server or test/cli');
});
