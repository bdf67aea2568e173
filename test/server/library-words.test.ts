/**
 * A library run speaks of the library's own queue: the table's row for duplicates names the list
 * its recovered jobs go back on (BullMQ's `wait`, node-resque's `failed`, Bee-Queue's `waiting`),
 * and so do the legend and the readout under it, with the library's own stalled jobs and counter —
 * none for Bee-Queue, of which nothing is said. The wide table and the HTML page's labels name the
 * same list. Words of the model queue (pending, expired leases) appear nowhere in such a run.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runCli } from '../helpers/cli.js';
import { forOneServerKind } from '../helpers/servers.js';

/** The project's folder, whose node_modules holds the libraries the tests race. */
const PROJECT = fileURLToPath(new URL('../../../', import.meta.url));

/** A run of `lib`'s three modes on 100 jobs, its stdout with the wrapped sentences joined again. */
async function libraryRun(url: string, lib: string, extra: readonly string[] = []): Promise<string> {
  const result = await runCli(['--url', url, '--lib', lib, '--lib-from', PROJECT, '--jobs', '100', '--loop-jobs', '100', ...extra]);
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.replace(/\n {2}(?! )/g, ' ');
}

/** The readout line of `mode`. */
function readoutOf(stdout: string, mode: string): string {
  const line = stdout.split('\n').find((l) => l.startsWith(`${mode} (`));
  assert.ok(line, `a readout for ${mode}:\n${stdout}`);
  return line;
}

/** No word of the model queue's in a library run ("unreclaimed", a figure's name, aside). */
function assertNoModelWords(stdout: string): void {
  assert.doesNotMatch(stdout, /pending|expired lease|\breclaimed/, stdout);
}

forOneServerKind(import.meta.url, 'a library run in its own words', (handle) => {
  test('--lib bullmq: duplicates in wait, jobs whose locks lapsed, stalls counted in stc', async () => {
    const out = await libraryRun(handle.url, 'bullmq');
    assert.match(out, /^duplicate in wait +0 +\d+ +0$/m, out);
    assert.match(out, /From the server's state \(duplicate in wait,/);
    assert.match(
      readoutOf(out, 'bullmq-guarded'),
      /^bullmq-guarded \(2 sweepers, 100 jobs\): every job whose lock lapsed was recovered exactly once and every stall was counted in its job's stc \(100 recoveries, 0 anomalies\)\.$/,
    );
    assert.match(readoutOf(out, 'bullmq-naive'), /left 100 duplicate entries in wait \(jobs that would be taken up to 2 times\)/);
    assertNoModelWords(out);
  });

  test("--lib node-resque: duplicates in failed, dead workers' jobs, failures counted in stat:failed", async () => {
    const out = await libraryRun(handle.url, 'node-resque');
    assert.match(out, /^duplicate in failed +\d+ +\d+$/m, out);
    assert.match(
      readoutOf(out, 'node-resque-guarded'),
      /: every dead worker's job was pushed onto failed exactly once and every failure was counted in stat:failed \(100 recoveries, 0 anomalies\)\.$/,
    );
    // Its own recovery races by design; where it did, the duplicates are in failed.
    for (const mode of ['node-resque', 'node-resque-naive']) {
      const line = readoutOf(out, mode);
      if (line.includes('duplicate entr')) assert.match(line, /duplicate entr(y|ies) in failed \(/, line);
    }
    assertNoModelWords(out);
  });

  test('--lib bee-queue --wide --html: duplicates in waiting in every form, and nothing said of a counter it does not keep', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emq-library-words-'));
    try {
      const page = join(dir, 'report.html');
      const out = await libraryRun(handle.url, 'bee-queue', ['--wide', '--html', page]);
      // The wide table's heading breaks across two lines of its head row.
      const head = out.split('\n').slice(1, 4).join('\n');
      assert.match(head, /│ +duplicate │/, head);
      assert.match(head, /│ +in waiting │/, head);
      for (const mode of ['bee-queue', 'bee-queue-guarded'])
        assert.match(readoutOf(out, mode), /\): every stalled job was moved back to waiting exactly once \(100 recoveries, 0 anomalies\)\.$/);
      const readouts = ['bee-queue', 'bee-queue-naive', 'bee-queue-guarded'].map((mode) => readoutOf(out, mode)).join('\n');
      assert.doesNotMatch(readouts, /count/, 'Bee-Queue keeps no stall counter: nothing is said of one');
      assertNoModelWords(out);
      const html = readFileSync(page, 'utf8');
      assert.match(html, /<th scope="row">duplicate in waiting<\/th>/);
      assert.match(html, /<li>bee-queue \(2 sweepers, 100 jobs\): every stalled job was moved back to waiting exactly once/);
      assert.match(html, /<p class="lede">Jobs whose worker died, seeded by Bee-Queue/);
      assert.doesNotMatch(html, /duplicate pending|[Ee]xpired lease/);
      // --stalled-before is the model queue's; Bee-Queue's run was never given one.
      assert.match(html, /<dt>library<\/dt><dd>bee-queue /);
      assert.doesNotMatch(html, /<dt>stalled-before<\/dt>/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
