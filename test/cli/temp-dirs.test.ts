/**
 * The tests leave nothing in the temporary folder: the helpers' folders (certificates with their
 * private keys, sweep scripts) go when the test file's process exits, and every test file that
 * makes a folder of its own also removes it.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const HELPERS = new URL('../helpers/', import.meta.url);

test("the certificate and script helpers' folders are gone once the process that made them exits", {
  skip: existsSync('/usr/bin/openssl') || process.env.PATH?.split(':').some((dir) => existsSync(`${dir}/openssl`)) ? false : 'openssl is not installed',
}, () => {
  // A process of its own, as each test file runs in: it makes the files, prints their paths and ends.
  const program = `
    const { makeCerts } = await import(${JSON.stringify(new URL('certs.js', HELPERS).href)});
    const { scriptFile } = await import(${JSON.stringify(new URL('scripts.js', HELPERS).href)});
    const certs = makeCerts();
    console.log(JSON.stringify([certs.dir, certs.clientKey, scriptFile('sweep.lua', 'return {}')]));
  `;
  const [certs, key, script] = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', program], { encoding: 'utf8' })) as string[];
  assert.match(certs ?? '', /emq-race-certs-/);
  assert.ok(key?.startsWith(certs ?? '?'), 'the private key was in that folder');
  for (const path of [certs, key, script]) assert.equal(existsSync(path ?? ''), false, `${path} is gone`);
});

test('every test file that makes a temporary folder removes it', () => {
  const test = fileURLToPath(new URL('../', import.meta.url));
  const files = ['unit', 'server', 'cli'].flatMap((tier) =>
    readdirSync(`${test}${tier}`)
      .filter((name) => name.endsWith('.test.js'))
      .map((name) => `${tier}/${name}`),
  );
  for (const name of files) {
    const source = readFileSync(`${test}${name}`, 'utf8');
    if (source.includes('mkdtempSync(')) assert.ok(source.includes('rmSync('), `${name} makes a temporary folder: it removes it (in after() or finally)`);
  }
});
