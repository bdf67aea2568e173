#!/usr/bin/env node
/**
 * Runs the compiled test files of the tiers named (`unit`, `server`, `cli`; all three when none is
 * named) with Node's test runner, the longest files first.
 *
 * The runner starts the files in the order given, a few at a time, so a long file started last
 * would run alone at the end while the other slots sit idle. LONGEST lists the files that take
 * longest in a whole run, longest first; most of their time is spent waiting on a server, a signal
 * or a heartbeat, so they overlap well with the rest. A file not in it starts after them, in name
 * order, the unit tier's last.
 *
 * The files go to the runner's own `run()`, not to `node --test`: on Node 20 the command line sorts
 * the files it is given by name, which would undo the order.
 *
 * `--concurrency N` sets how many files run at once. The default, 4, is more files than cores: the
 * long files mostly wait. On a quiet 2-core machine a whole run (Node 20, no coverage) took 236 s
 * three at a time in the earlier ranking, and in this one 210 s four at a time and 203 s five at a
 * time: past four the CPU-bound files only crowd each other, and bring the tests' bounded waits
 * closer to their limits.
 *
 * `--times` prints, once the run ends, each file's wall time in it (from its first test begun to its
 * last ended), longest first: where the suite's minutes go, and what to cut.
 *
 * `--checks` runs `npm run check` (layers, lint, dead code) beside the tests rather than before
 * them: it is one process on one core for some seconds, which the tests' own waits leave room for.
 * Its output is printed once it ends, and a failed check fails the run.
 */
import { spawn } from 'node:child_process';
import { setMaxListeners } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { run } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { spec, tap } from 'node:test/reporters';
// Built before the tests by every script that runs this file (`npm test`, the tiers' own).
import { commandLine, killWithDescendants } from '../dist/test/helpers/processes.js';

// Ranked by each file's wall time run alone (`node --test` on one file at a time, a quiet 2-core
// machine; in a whole run a file's time is mostly what runs beside it), longest first, so that the
// last files to start are short ones: files that mostly wait (on a signal, a heartbeat, a server's
// timeout) overlap with the rest only if they start early. Files not listed (under 6.5 s alone)
// follow in name order, the unit tier's last: they are the shortest, and they fill the slots the
// long files leave at the end. Ranked anew when a file's time moves it: run alone, the files took
// 545 s one after another and 367 s of the machine's CPU in all (read from /proc/stat around each).
const LONGEST = [
  'server/server-failures',
  'cli/helper-death',
  'server/cluster',
  'cli/server-wrappers',
  'cli/paused-run',
  'cli/failover-exits',
  'cli/secrecy',
  'server/latency-race',
  'cli/broken-peer',
  'cli/terminal-output',
  'cli/interrupt',
  'server/grid-lib',
  'server/shared-servers',
  'server/docs-samples',
  'cli/interrupt-long-waits',
  'server/cli',
  'server/explore',
  'server/failover',
  'server/scale-cli',
  'cli/pack',
  'server/faults',
  'server/grid',
  'server/library-bullmq',
  'server/vanished-keys',
  'server/failover-wait',
  'server/consequences',
  'server/library-busy',
  'server/cluster-resharding',
  'server/tls',
  'server/data-safety',
  'server/library-bee-queue',
];

const args = process.argv.slice(2);
let concurrency = 4;
let checks = false;
let times = false;
const tiers = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--concurrency') concurrency = Number(args[++i]);
  else if (args[i] === '--checks') checks = true;
  else if (args[i] === '--times') times = true;
  else tiers.push(args[i]);
}
if (!(concurrency >= 1)) throw new Error('--concurrency: a number of 1 or more');
for (const tier of tiers) if (!['unit', 'server', 'cli'].includes(tier)) throw new Error(`unknown test tier: ${tier} (unit, server or cli)`);

const files = (tiers.length > 0 ? tiers : ['unit', 'server', 'cli']).flatMap((tier) =>
  readdirSync(join('dist', 'test', tier))
    .filter((name) => name.endsWith('.test.js'))
    .sort()
    .map((name) => `${tier}/${name.slice(0, -'.test.js'.length)}`),
);
const rank = (file) => {
  const at = LONGEST.indexOf(file);
  if (at !== -1) return at;
  return file.startsWith('unit/') ? LONGEST.length + 1 : LONGEST.length;
};
const ordered = files.map((file, at) => ({ file, at })).sort((a, b) => rank(a.file) - rank(b.file) || a.at - b.at);

if (checks) {
  // Not under coverage: the checks run none of the project's code. Set empty, not left out: Node
  // hands its own NODE_V8_COVERAGE on to a child whose environment lacks the name.
  const env = { ...process.env, NODE_V8_COVERAGE: '' };
  const check = spawn('npm', ['run', '-s', 'check'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  check.stdout.on('data', (chunk) => output.push(chunk));
  check.stderr.on('data', (chunk) => output.push(chunk));
  check.on('close', (code, signal) => {
    const text = Buffer.concat(output).toString().trimEnd();
    if (code === 0) process.stderr.write(`npm run check: passed\n${text}\n`);
    else {
      process.stderr.write(`npm run check: FAILED (${signal ?? `exit ${code}`})\n${text}\n`);
      process.exitCode = 1;
    }
  });
}

// A signal stops the run: the runner ends the files' processes, and the cancelled tests fail it.
const stop = new AbortController();
// The runner adds a listener to it per file: well over Node's default warning mark of ten, and no leak.
setMaxListeners(Number.POSITIVE_INFINITY, stop.signal);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => stop.abort());
// No forceExit: with it, a file's process exits as soon as its tests end, before it has finished
// writing their results to the runner, and the runner silently counts fewer tests than ran (seen on
// Node 24: a file's last two tests missing from a run that passed; Node's test runner issue 64833).
// A file whose failed test left a handle open (a child's pipe, a socket) so stays alive, and
// timeout ends it: a file that never ends fails after FILE_LIMIT_MS (each file takes well under a
// minute alone) and the tests it was running are named, where the runner itself names only the file.
const FILE_LIMIT_MS = 5 * 60_000;
// Every process the files start inherits this mark, so that one a failed test left behind (a CLI
// paused for a signal, a helper) is found and stopped once the files have ended, not left running
// on the machine after the run.
const MARK = `EMQ_RACE_TEST_RUN=${process.pid}`;
process.env.EMQ_RACE_TEST_RUN = String(process.pid);
// Under coverage (c8 sets NODE_V8_COVERAGE), it is counted in the files' own processes only, not in
// those they start: scripts/coverage-scope.mjs, loaded into each file's process, sees to it.
if (process.env.NODE_V8_COVERAGE) {
  process.env.EMQ_RACE_OUTER_NODE_OPTIONS = process.env.NODE_OPTIONS ?? '';
  const scope = `--import=${new URL('coverage-scope.mjs', import.meta.url).href}`;
  process.env.NODE_OPTIONS = [process.env.NODE_OPTIONS, scope].filter(Boolean).join(' ');
}
const stream = run({
  files: ordered.map(({ file }) => join('dist', 'test', `${file}.test.js`)),
  concurrency,
  signal: stop.signal,
  timeout: FILE_LIMIT_MS,
});
// The tests each file has begun and not yet ended, from the events its process sends as they happen.
const running = new Map();
const key = (event) => `${event.nesting} ${event.name}`;
// Each file's first test begun and last ended, for --times.
const began = performance.now();
const spans = new Map();
const mark = (event) => {
  if (!event.file) return;
  const now = performance.now();
  const span = spans.get(event.file);
  if (span) span.last = now;
  else spans.set(event.file, { first: now, last: now });
};
stream.on('test:pass', mark);
stream.on('test:fail', mark);
stream.on('test:dequeue', (event) => {
  mark(event);
  if (!running.has(event.file)) running.set(event.file, new Set());
  running.get(event.file).add(key(event));
});
stream.on('test:pass', (event) => running.get(event.file)?.delete(key(event)));
// The failures, named again once the run ends: a CI log that keeps only its tail still shows them.
const failures = [];
const failedFiles = new Set();
stream.on('test:fail', (event) => {
  running.get(event.file)?.delete(key(event));
  failedFiles.add(event.file);
  if (event.todo) return;
  process.exitCode = 1;
  const error = event.details?.error;
  const where = event.file ? relative(process.cwd(), event.file) : '(runner)';
  if (error?.failureType === 'subtestsFailed') return; // a suite: its failed tests are named themselves
  let reason = String(error?.cause?.message ?? error?.message ?? error ?? '').split('\n')[0];
  if (error?.failureType === 'testTimeoutFailure' && event.nesting === 0 && running.get(event.file)?.size) {
    const names = [...running.get(event.file)].map((entry) => entry.slice(entry.indexOf(' ') + 1));
    reason = `still running after ${FILE_LIMIT_MS / 1000} s: ${names.join(' > ')}`;
  }
  // A file's own failure carries the file's path as its name.
  failures.push(event.name === where ? `${where}: ${reason}` : `${where}: ${event.name}: ${reason}`);
});
// The reporter `node --test` picks: spec on a terminal, TAP in a log.
const reporter = stream.compose(process.stdout.isTTY ? spec : tap);
reporter.pipe(process.stdout, { end: false });
reporter.once('end', () => {
  // A test that began and never ended in a file that did not fail: its result never reached the
  // runner, which would count fewer tests than ran and pass. Named, and the run fails. The file's
  // own entry (its path as its name) has no result of its own unless the file fails.
  for (const [file, names] of running) {
    if (failedFiles.has(file)) continue;
    const where = relative(process.cwd(), file);
    for (const entry of names) {
      const name = entry.slice(entry.indexOf(' ') + 1);
      if (name === file || name === where) continue;
      process.exitCode = 1;
      failures.push(`${where}: ${name}: began, and its result never reached the runner`);
    }
  }
  if (times) {
    const lines = [...spans]
      .filter(([file]) => file.endsWith('.test.js'))
      .map(([file, { first, last }]) => ({ file: relative(process.cwd(), file), seconds: (last - first) / 1000, from: (first - began) / 1000 }))
      .sort((a, b) => b.seconds - a.seconds)
      .map(({ file, seconds, from }) => `#   ${seconds.toFixed(1).padStart(6)} s  from ${from.toFixed(1).padStart(6)} s  ${file}`);
    process.stdout.write(`# each file's wall time in this run, longest first, and when its first test began:\n${lines.join('\n')}\n`);
  }
  if (failures.length > 0) process.stdout.write(`# failed (${failures.length}):\n${failures.map((line) => `#   ${line}`).join('\n')}\n`);
});

/** The processes still running that carry MARK, each with its command line. */
function marked() {
  const found = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      if (!readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(MARK)) continue;
      found.push({ pid, command: commandLine(pid).trim() });
    } catch {
      // ended meanwhile, or not ours to read
    }
  }
  return found;
}

// Once every file has ended: what they started has a few seconds to end by itself (a server's
// keeper stops its server and removes its folder once the file that started it has gone); what is
// still running then is stopped, and named, with the processes below it: a server retitles itself
// over its environment, so the mark shows on its keeper, not on it.
stream.once('end', async () => {
  for (let waited = 0; waited < 5000 && marked().length > 0; waited += 100) await sleep(100);
  for (const { pid, command } of marked()) {
    killWithDescendants(pid);
    process.stderr.write(`left running by the tests, now stopped with what it started: ${pid} ${command}\n`);
  }
});
