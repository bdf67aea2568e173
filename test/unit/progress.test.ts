/**
 * The progress line as pure functions and a board driven by hand: what a narrow terminal keeps
 * (the time left) and drops first, seeding shown batch by batch, and the in-place line ended
 * before any other line on stderr.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitLabelled, fitPieces, keepLinesApart, progressBoard, progressSummary, type ProgressEntry } from '../../src/race/progress.js';
import { visibleLength } from '../../src/shared/text.js';

const race: ProgressEntry = { mode: 'atomic', queue: 'race-0123abcd', left: 750_000, jobs: 1_000_000, elapsedMs: 10_000 };

test('a terminal of 80 columns keeps the time left: the queue, the time taken, the rate, then the noun go first', () => {
  const full = progressSummary([race]);
  assert.equal(full, 'atomic: 250,000/1,000,000 leases reclaimed (25%), 25,000 jobs/s, 10s elapsed, about 30s left (queue race-0123abcd)');
  // The same line as the pieces a terminal fits, each with the rank its cut takes it at.
  const pieces = [
    { text: 'atomic: 250,000/1,000,000' },
    { text: ' leases reclaimed', cut: 4 },
    { text: ' (25%)' },
    { text: ', 25,000 jobs/s', cut: 3 },
    { text: ', 10s elapsed', cut: 2 },
    { text: ', about 30s left' },
    { text: ' (queue race-0123abcd)', cut: 1 },
  ];
  assert.equal(fitPieces(pieces, 200), full);
  assert.equal(fitPieces(pieces, 95), 'atomic: 250,000/1,000,000 leases reclaimed (25%), 25,000 jobs/s, 10s elapsed, about 30s left');
  assert.equal(fitPieces(pieces, 79), 'atomic: 250,000/1,000,000 leases reclaimed (25%), 25,000 jobs/s, about 30s left');
  assert.equal(fitPieces(pieces, 70), 'atomic: 250,000/1,000,000 leases reclaimed (25%), about 30s left');
  assert.equal(fitPieces(pieces, 50), 'atomic: 250,000/1,000,000 (25%), about 30s left');
  // Narrower than what must stay: cut, and marked as cut.
  const cut = fitPieces(pieces, 30);
  assert.equal(visibleLength(cut), 30);
  assert.match(cut, /…$/);
});

test('seeding: shown batch by batch once it has taken a second, with its own time left; the race takes its place', () => {
  let clock = 0;
  const written: string[] = [];
  const board = progressBoard((text) => written.push(text), { terminal: true, width: () => 80, now: () => clock });
  const seeding = board.seeding('atomic', 'race-0123abcd', 200_000);
  // The first second is quiet: a short run prints nothing.
  clock = 500;
  seeding.seeded(5000);
  assert.deepEqual(written, []);
  clock = 2000;
  seeding.seeded(45_000);
  // 79 columns: the queue's name is the first to go.
  assert.deepEqual(written, ['\r\x1b[2Katomic: seeding 50,000/200,000 jobs (25%), 2s elapsed, about 6s left']);
  // Batches land many times a second: the line is redrawn at most four times a second.
  clock = 2100;
  seeding.seeded(5000);
  assert.equal(written.length, 1);
  clock = 2300;
  seeding.seeded(5000);
  assert.equal(written.length, 2);
  assert.match(written[1] ?? '', /^\r\x1b\[2Katomic: seeding 60,000\/200,000 jobs \(30%\)/);
  // Seeding over, nothing else running: the line is cleared for the race's own.
  seeding.stop();
  assert.equal(written.at(-1), '\r\x1b[2K');
});

test("a label (--trials' trial) starts the terminal's line, read at each drawing, and the rest fits beside it", () => {
  let clock = 0;
  let label = 'trial 1/2, ';
  const written: string[] = [];
  const board = progressBoard((text) => written.push(text), { terminal: true, width: () => 72, now: () => clock, label: () => label });
  const seeding = board.seeding('atomic', 'race-0123abcd', 200_000);
  clock = 2000;
  seeding.seeded(50_000);
  label = 'trial 2/2, ';
  clock = 2300;
  seeding.seeded(10_000);
  assert.equal(written.length, 2);
  assert.match(written[0] ?? '', /^\r\x1b\[2Ktrial 1\/2, atomic: seeding 50,000\/200,000/);
  assert.match(written[1] ?? '', /^\r\x1b\[2Ktrial 2\/2, atomic: seeding 60,000\/200,000/);
  for (const line of written) assert.ok(visibleLength(line.slice('\r\x1b[2K'.length)) <= 71, line);
});

test('a label that leaves no room for the count and the time left is dropped, not the time left', () => {
  const pieces = [
    { text: 'atomic: 250,000/1,000,000' },
    { text: ' leases reclaimed', cut: 4 },
    { text: ' (25%)' },
    { text: ', about 30s left' },
    { text: ' (queue race-0123abcd)', cut: 1 },
  ];
  assert.equal(fitLabelled('trial 1/2, ', pieces, 80), 'trial 1/2, atomic: 250,000/1,000,000 leases reclaimed (25%), about 30s left');
  assert.equal(fitLabelled('trial 1/2, ', pieces, 60), 'trial 1/2, atomic: 250,000/1,000,000 (25%), about 30s left');
  // 48 columns hold what must stay (47) but not the label beside it: the label goes.
  assert.equal(fitLabelled('trial 10/10, ', pieces, 48), 'atomic: 250,000/1,000,000 (25%), about 30s left');
  assert.equal(fitLabelled('', pieces, 48), fitPieces(pieces, 48));
});

test("seeding in a CI log: a plain line at the log's pace, wrapped, with the queue", () => {
  let clock = 0;
  const written: string[] = [];
  const board = progressBoard((text) => written.push(text), { terminal: false, width: () => 80, now: () => clock });
  const seeding = board.seeding('loop', 'race-0123abcd', 100_000);
  clock = 3000;
  seeding.seeded(30_000);
  assert.deepEqual(written, [], "none in the command's first five seconds");
  clock = 6000;
  seeding.seeded(30_000);
  assert.deepEqual(written, ['progress: loop: seeding 60,000/100,000 jobs (60%), 6s elapsed, about 4s left\n  (queue race-0123abcd)\n']);
  seeding.stop();
  assert.equal(written.length, 1, 'a log has no line to clear');
});

test('queues side by side: those still seeding are summed apart from those racing', () => {
  const seeding: ProgressEntry = { mode: 'loop', queue: 'q-2', left: 500, jobs: 1000, seeding: true };
  const racing: ProgressEntry = { mode: 'loop', queue: 'q-1', left: 600, jobs: 1000 };
  assert.equal(progressSummary([racing, seeding]), 'loop, 1 queue: 400/1,000 leases reclaimed (40%); loop, 1 queue: seeding 500/1,000 jobs (50%)');
});

test('stderr on a terminal: the in-place line is ended before any other line, and only then', () => {
  const written: string[] = [];
  const err = keepLinesApart((text) => written.push(text));
  err('\r\x1b[2Katomic: 10/100 leases reclaimed (10%)');
  err('\r\x1b[2Katomic: 20/100 leases reclaimed (20%)');
  err('emq-race: SIGINT received, cleaning up\n');
  err('emq-race: a second line\n');
  // Cleared, then a message: nothing left on the line to end.
  err('\r\x1b[2Katomic: 30/100 leases reclaimed (30%)');
  err('\r\x1b[2K');
  err('emq-race: after a cleared line\n');
  assert.deepEqual(written, [
    '\r\x1b[2Katomic: 10/100 leases reclaimed (10%)',
    '\r\x1b[2Katomic: 20/100 leases reclaimed (20%)',
    '\nemq-race: SIGINT received, cleaning up\n',
    'emq-race: a second line\n',
    '\r\x1b[2Katomic: 30/100 leases reclaimed (30%)',
    '\r\x1b[2K',
    'emq-race: after a cleared line\n',
  ]);
});

test("a stage the race waits on takes the rate's and the time left's place: the rate so far cannot foretell it", () => {
  const waiting = { ...race, stage: 'waiting for the workers to finish their jobs before the failover' };
  assert.equal(
    progressSummary([waiting]),
    'atomic: 250,000/1,000,000 leases reclaimed (25%), 10s elapsed, waiting for the workers to finish their jobs before the failover (queue race-0123abcd)',
  );
  // A narrow terminal keeps the stage, as it keeps the time left.
  assert.equal(
    fitPieces([{ text: 'atomic: 1,000/1,000' }, { text: ' leases reclaimed', cut: 4 }, { text: ', 10s elapsed', cut: 2 }, { text: ', sweeps done' }], 34),
    'atomic: 1,000/1,000, sweeps done',
  );
  // Before the first second's reading, the stage alone follows the count.
  const { elapsedMs: _, ...untimed } = waiting;
  assert.equal(
    progressSummary([untimed]),
    'atomic: 250,000/1,000,000 leases reclaimed (25%), waiting for the workers to finish their jobs before the failover (queue race-0123abcd)',
  );
});
