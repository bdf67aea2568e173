/**
 * The samples' markers, blocks and shapes (test/helpers/docs-samples.ts), tested directly: two
 * runs that differ only in their numbers, their wrapping and the clauses the race decides have
 * one shape; a renamed row, column or fixed sentence does not.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { commandLine, findSamples, lineShape, outputShape, replaceSamples, sampleBlock, shapeDifferences, shellWords } from '../helpers/docs-samples.js';
import { withoutProgress } from '../helpers/progress-lines.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

const RUN_A = `server: redis 7.0.15 (embedded, now stopped)
                   atomic    loop
─────────────────────────────────
jobs                1,000   1,000
recoveries          1,000   2,886
double recoveries       0   1,886
unacked moves           0       4
other anomalies         0      10
jobs/s             47,350     256
other anomalies: loop 10 misplaced (each its own column with --wide)
atomic (8 sweepers, 1,000 jobs): every expired lease was reclaimed exactly once
  and every stall was counted (1,000 recoveries, 0 anomalies).
loop (8 sweepers, 1,000 jobs): recovered 841 jobs more than once (1,886 extra
  recoveries, by the sweepers' own records), left 1,874 duplicate entries in
  pending (jobs that would run up to 8 times), misplaced 10 jobs.
atomic is clean because the server runs a script whole.

Example: job 899 of the loop run, every command its sweepers sent for it, in the
  order the server ran them (keys under emq:{race-abb30014-loop}:):
  s2  ZSCORE active 899                     ← "1796163527349"
  s5  ZREM active 899                       ← (integer) 1
Proven from the replies alone: ZREM answered 1.
`;

// The same run with other numbers: wrapped elsewhere, no misplaced jobs, no unacked moves, another example.
const RUN_B = `server: valkey 8.0.1 (embedded, now stopped)
                   atomic      loop
───────────────────────────────────
jobs                1,000     1,000
recoveries          1,000    12,886
double recoveries       0    11,886
other anomalies         0         0
jobs/s            147,350        56
atomic (8 sweepers, 1,000 jobs): every expired lease was reclaimed exactly once
  and every stall was counted (1,000 recoveries, 0 anomalies).
loop (8 sweepers, 1,000 jobs): recovered 1 job more than once (11,886 extra recoveries,
  by the sweepers' own records), left 1 duplicate entry in pending (jobs that
  would run twice).
atomic is clean because the server runs a script whole.

Example: job 12 of the loop run, every command its sweepers sent for it, in the order they were sent (keys under emq:{race-00c0ffee-loop}:):
  s1  ZSCORE active 12                     ← "1796163527349"
  s1  ZREM active 12                       ← (integer) 1
  s2  ZREM active 12                       ← (integer) 0
The replies do not prove the server's order (none): these lines are the order of sending.
`;

const OPTIONAL_ROWS = ['unacked moves'];

test('numbers, units, hosts, queue names and plurals take no part in a line’s shape', () => {
  assert.equal(lineShape('jobs/s             47,350     256'), lineShape('jobs/s 1 12.5'));
  assert.equal(lineShape('1 ms → 1.12–1.18 ms; 48.0k/s, 85%'), lineShape('10 ms → 3.1–4 ms; 111k/s, 100%'));
  assert.equal(lineShape('server: redis 7.0.15 at redis://127.0.0.1:40747'), lineShape('server: valkey 8.0.1 at redis://127.0.0.1:1'));
  assert.equal(lineShape('queue race-44e569a7-loop-0-2'), lineShape('queue race-0badcafe-loop-1-3'));
  assert.equal(lineShape('1 stall increment was lost, would run twice'), lineShape('3 stall increments were lost, would run 4 times'));
  assert.equal(lineShape('→ EVALSHA bdcd172b… 3'), lineShape('→ EVALSHA 0f1e2d3c… 3'));
  assert.notEqual(lineShape('double recoveries 0 1'), lineShape('double recovery count 0 1'));
});

test('two runs that differ in numbers, wrapping, counted clauses and the example have one shape', () => {
  assert.deepEqual(shapeDifferences(outputShape(RUN_A), outputShape(RUN_B), OPTIONAL_ROWS), []);
  assert.deepEqual(shapeDifferences(outputShape(RUN_B), outputShape(RUN_A), OPTIONAL_ROWS), []);
});

test('a renamed row, a column more, a changed fixed sentence or a missing line differ', () => {
  const cases: [string, string][] = [
    ['double recoveries', 'double recovery count'],
    ['atomic    loop', 'atomic    loop    watch'],
    ['is clean because the server runs a script whole', 'is clean because a script runs whole'],
    ['jobs/s             47,350     256\n', ''],
    ['every stall was counted', 'every stall counted'],
  ];
  for (const [from, to] of cases) {
    assert.ok(RUN_A.includes(from), from);
    const differences = shapeDifferences(outputShape(RUN_A.replace(from, to)), outputShape(RUN_B), OPTIONAL_ROWS);
    assert.notDeepEqual(differences, [], `${JSON.stringify(from)} → ${JSON.stringify(to)} went unseen`);
  }
});

test('a row shown only when not zero may be absent; any other row may not', () => {
  const withRow = outputShape('jobs  1  2\nunacked moves  0  4\nlost jobs  0  0');
  const withoutRow = outputShape('jobs  1  2\nlost jobs  0  0');
  assert.deepEqual(shapeDifferences(withRow, withoutRow, OPTIONAL_ROWS), []);
  assert.notDeepEqual(shapeDifferences(withRow, withoutRow, []), []);
  assert.notDeepEqual(shapeDifferences(outputShape('jobs  1  2\nlost jobs  0  0'), outputShape('jobs  1  2'), OPTIONAL_ROWS), []);
});

test('a run with an example and one without have one shape; the rest of the output still counts', () => {
  const cut = RUN_A.slice(0, RUN_A.indexOf('\nExample: '));
  assert.ok(cut.length < RUN_A.length, 'RUN_A has an example');
  assert.deepEqual(shapeDifferences(outputShape(cut), outputShape(RUN_A), OPTIONAL_ROWS), []);
  assert.deepEqual(shapeDifferences(outputShape(RUN_A), outputShape(cut), OPTIONAL_ROWS), []);
  assert.notDeepEqual(shapeDifferences(outputShape(cut.replace('double recoveries', 'double recovery count')), outputShape(RUN_A), OPTIONAL_ROWS), []);
});

test('a trials table’s rows are rows: renamed or missing, they differ', () => {
  const trials = 'trials                    3            3\nreproduced         0/3 (0%)   3/3 (100%)\nlost jobs  0 / 0 / 0  0 / 0 / 0';
  assert.deepEqual(shapeDifferences(outputShape(trials), outputShape(trials.replace('3/3 (100%)', '2/3 (67%)'))), []);
  assert.notDeepEqual(shapeDifferences(outputShape(trials), outputShape(trials.replace('reproduced', 'reproduce'))), []);
  assert.notDeepEqual(shapeDifferences(outputShape(trials), outputShape(trials.replace(/\nreproduced.*\n/, '\n'))), []);
});

test('two sweeps sent at one moment may run in either order', () => {
  const aFirst = 'the server ran A then B (from the replies)\n1  sweep      │\n   ← 1) "1"  │\n2             │ sweep\n              │ ← (empty array)';
  const bFirst = 'the server ran B then A (from the replies)\n1             │ sweep\n              │ ← 1) "1"\n2  sweep      │\n   ← (empty array)  │';
  assert.deepEqual(shapeDifferences(outputShape(aFirst), outputShape(bFirst)), []);
});

test('the legend may list recoveries under either source; any other figure moved differs', () => {
  const heard =
    "From the server's state (duplicate pending, lost jobs); the sweepers' own records\n  (recoveries, double recoveries); the server's state against the sweepers' records\n  (lost increments, stolen leases).";
  const reconciled =
    "From the server's state (duplicate pending, lost jobs); the sweepers' own records\n  (double recoveries); the server's state against the sweepers' records\n  (recoveries, lost increments, stolen leases).";
  const alone = "From the server's state (duplicate pending); the sweepers' own records (recoveries,\n  double recoveries).";
  const aloneReconciled =
    "From the server's state (duplicate pending); the sweepers' own records (double\n  recoveries); the server's state against the sweepers' records (recoveries).";
  assert.deepEqual(shapeDifferences(outputShape(heard), outputShape(reconciled)), []);
  assert.deepEqual(shapeDifferences(outputShape(alone), outputShape(aloneReconciled)), []);
  const movedLost = heard.replace('(duplicate pending, lost jobs)', '(duplicate pending)').replace('(lost increments,', '(lost jobs, lost increments,');
  assert.notDeepEqual(shapeDifferences(outputShape(heard), outputShape(movedLost)), []);
});

test("a readout's faults and note are entries of their own, however their clauses wrap", () => {
  const readout = (faults: string) =>
    `loop (4 sweepers, 3,000 jobs): recovered 1,600 jobs more than once, misplaced 27 jobs.\n  ${faults}\n  note: script-flush does not apply to loop: the loop sends no script, so an\n    emptied script cache cannot touch it.`;
  const killed = readout('faults on loop: 62 sweeper connections were killed (62 reconnects, 62 replies\n    lost).');
  const unheard = readout(
    'faults on loop: 62 sweeper connections were killed (62 reconnects, 62 replies\n    lost); 1 move ran without its reply reaching the sweeper (reconciled from\n    the server, not anomalies).',
  );
  assert.deepEqual(shapeDifferences(outputShape(killed), outputShape(unheard)), []);
  assert.ok(outputShape(killed).includes('note: script-flush doe not apply to loop: the loop send no script, so an emptied script cache cannot touch it.'));
  assert.notDeepEqual(shapeDifferences(outputShape(killed), outputShape(killed.replace('cannot touch it', 'cannot reach it'))), []);
});

test('the same lines in another order differ', () => {
  assert.notDeepEqual(shapeDifferences(outputShape('jobs  1\nlost jobs  0'), outputShape('lost jobs  0\njobs  1')), []);
});

test('a marker’s block is found to its last indented line, and replaced whole', () => {
  const text = [
    'Intro.',
    '<!-- sample: --sweepers 8 | slow, exit -->',
    '    $ emq-race --sweepers 8',
    '    first',
    '',
    '    after a blank',
    '',
    'Prose again.',
  ].join('\n');
  const [sample, ...more] = findSamples('x.md', text);
  assert.equal(more.length, 0);
  assert.ok(sample);
  assert.deepEqual(sample.args, ['--sweepers', '8']);
  assert.equal(sample.slow, true);
  assert.equal(sample.exit, true);
  assert.deepEqual(sample.block, ['$ emq-race --sweepers 8', 'first', '', 'after a blank']);
  const block = sampleBlock(sample, 'out\n\nmore\n', 2);
  assert.deepEqual(block, ['$ emq-race --sweepers 8', 'out', '', 'more', '$ echo $?', '2']);
  assert.equal(
    replaceSamples(text, [sample], new Map([[sample.line, block]])),
    [
      'Intro.',
      '<!-- sample: --sweepers 8 | slow, exit -->',
      '    $ emq-race --sweepers 8',
      '    out',
      '',
      '    more',
      '    $ echo $?',
      '    2',
      '',
      'Prose again.',
    ].join('\n'),
  );
});

test('a marker whose block names other arguments, or an unknown option, is refused', () => {
  assert.throws(() => findSamples('x.md', '<!-- sample: --sweepers 8 -->\n    $ emq-race --sweepers 4\n'), /must start with "\$ emq-race --sweepers 8"/);
  assert.throws(() => findSamples('x.md', '<!-- sample: --sweepers 8 | quick -->\n    $ emq-race --sweepers 8\n'), /unknown sample option quick/);
});

test('a marker may pipe the output through jq, whose filter may hold pipes and quotes, then options', () => {
  const marker = `<!-- sample: --json --mode atomic | jq -r '.runs[] | "\\(.mode) \\(.clean)"' | exit -->`;
  const line = `    $ emq-race --json --mode atomic | jq -r '.runs[] | "\\(.mode) \\(.clean)"'`;
  const [sample] = findSamples('x.md', `${marker}\n${line}\n    atomic true\n`);
  assert.ok(sample);
  assert.deepEqual(sample.args, ['--json', '--mode', 'atomic']);
  assert.deepEqual(sample.jq?.args, ['-r', '.runs[] | "\\(.mode) \\(.clean)"']);
  assert.equal(sample.exit, true);
  assert.equal(sample.setup.server, false);
  assert.equal(commandLine(sample), line.trim());
  assert.deepEqual(sampleBlock(sample, 'atomic true\n', 0), [line.trim(), 'atomic true', '$ echo $?', '0']);
});

test('a marker may ask for a server of its own, an ACL user on it and a foreign queue', () => {
  const text = '<!-- sample: --url $URL --queue race-payments | acl=-eval, foreign=race-payments, exit -->\n    $ emq-race --url $URL --queue race-payments\n';
  const [sample] = findSamples('x.md', text);
  assert.deepEqual(sample?.setup, { server: true, acl: '-eval', foreign: 'race-payments' });
  assert.deepEqual(findSamples('x.md', '<!-- sample: --url $URL | acl -->\n    $ emq-race --url $URL\n')[0]?.setup, { server: true, acl: '' });
  assert.deepEqual(findSamples('x.md', '<!-- sample: clean --url $URL -->\n    $ emq-race clean --url $URL\n')[0]?.setup, { server: true });
  assert.throws(() => findSamples('x.md', '<!-- sample: --url $URL | foreign -->\n    $ emq-race --url $URL\n'), /foreign= names the queue/);
});

test('a marker in a list item is indented like it, its block four spaces further in', () => {
  const text = '- item:\n\n  <!-- sample: --help -->\n      $ emq-race --help\n      Usage\n\n- next\n';
  const [sample] = findSamples('x.md', text);
  assert.equal(sample?.indent, '      ');
  assert.deepEqual(sample?.block, ['$ emq-race --help', 'Usage']);
  assert.ok(sample);
  const rewritten = replaceSamples(text, [sample], new Map([[sample.line, ['$ emq-race --help', 'Usage:', 'more']]]));
  assert.equal(rewritten, '- item:\n\n  <!-- sample: --help -->\n      $ emq-race --help\n      Usage:\n      more\n\n- next\n');
});

test('a jq filter is split into words as a shell would', () => {
  assert.deepEqual(shellWords(`-e '.schema == 1'`), ['-e', '.schema == 1']);
  assert.deepEqual(shellWords(`-c ".a"'.b' .c`), ['-c', '.a.b', '.c']);
});

test('progress lines are not part of a sample', () => {
  assert.equal(withoutProgress('a\nprogress: seeding 10%\n  more of it\nb\n'), 'a\nb\n');
});

test('every marker in README.md and docs/ has its block', () => {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => join('docs', name))].filter((f) => f.endsWith('.md'));
  const samples = files.flatMap((file) => findSamples(file, readFileSync(join(ROOT, file), 'utf8')));
  assert.ok(samples.length > 0, 'the docs have samples');
  assert.ok(
    samples.some((s) => !s.slow),
    'some samples are cheap enough for the test',
  );
});

test('every block of the tool’s output in README.md and docs/ is a sample or a labelled excerpt', () => {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => join('docs', name))].filter((f) => f.endsWith('.md'));
  const bare: string[] = [];
  for (const file of files) {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    lines.forEach((line, index) => {
      // A block's first line: a command shown with its prompt, after a blank line or a marker.
      if (!/^ {4,}\$ emq-race /.test(line) || ((lines[index - 1] ?? '').trim() !== '' && !(lines[index - 1] ?? '').includes('<!--'))) return;
      const above = (lines[index - 1] ?? '').trim();
      if (!/^<!-- (?:sample|excerpt): /.test(above)) bare.push(`${file}:${index + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(bare, [], 'output quoted by hand: put it under a sample marker (npm run samples makes it) or label it an excerpt');
});
