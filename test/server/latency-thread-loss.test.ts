/**
 * The latency proxy runs in a thread, which nothing outside the process can kill; but it can fail
 * or end. threadLoss turns that into the error the run stops with (exit 3), so the race's
 * connections never wait on a proxy that is gone; a thread ended on purpose (close) is no loss.
 * Real threads, each made to fail the way a proxy's could.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { EmqError, ExitCode } from '../../src/shared/errors.js';
import { threadLoss } from '../../src/server/latency-proxy.js';
import { within } from '../helpers/cli-process.js';

const LIMIT_MS = 15_000;

/** Resolves with the reason `signal` was aborted with. */
async function reasonOf(signal: AbortSignal): Promise<unknown> {
  if (!signal.aborted) await once(signal, 'abort');
  return signal.reason;
}

test('a thread that throws stops the run: exit 3, naming the failure', async () => {
  const lost = threadLoss(new Worker("throw new Error('proxy socket gone')", { eval: true }), () => false);
  const reason = await within(LIMIT_MS, 'the loss', reasonOf(lost));
  assert.ok(reason instanceof EmqError);
  assert.equal(reason.exitCode, ExitCode.server);
  assert.match(reason.message, /^the latency proxy's thread failed: proxy socket gone; the race's connections through it are lost$/);
});

test('a thread that ends unasked stops the run, with its exit code', async () => {
  const lost = threadLoss(new Worker('process.exit(7)', { eval: true }), () => false);
  const reason = await within(LIMIT_MS, 'the loss', reasonOf(lost));
  assert.ok(reason instanceof EmqError);
  assert.match(reason.message, /thread ended \(exit code 7\)/);
});

test('a thread ended by close() is no loss', async () => {
  const worker = new Worker('', { eval: true });
  const lost = threadLoss(worker, () => true);
  await within(LIMIT_MS, 'the thread to end', once(worker, 'exit'));
  assert.equal(lost.aborted, false);
});
