/**
 * The sequence diagram's heading: its title and subtitle wrapped onto as many lines as the
 * drawing's width needs, by the width estimate the diagram uses for its arrow labels, the drawing
 * growing to hold them; nothing of them cut.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { explainSvg } from '../../src/html/page.js';
import type { CounterJson, ReplayJson, ReplaysJson } from '../../src/html/report-data.js';
import { textWidth } from '../../src/html/sequence-diagram.js';

const SERVER = { kind: 'redis', version: '7.0.15', url: 'redis://127.0.0.1:6379' };
const READOUT = {
  recoverCount: 1,
  pendingEntries: 1,
  stalled: 1,
  expectedStalled: 1,
  realStalled: 1,
  lostIncrements: 0,
  extraIncrements: 0,
  overcountedStalls: 0,
  endedIn: ['pending'],
};

function replay(mode: 'loop' | 'atomic', queue: string, schedule: readonly string[] = ['A:detect', 'B:detect']): ReplayJson {
  return {
    mode,
    queue,
    jobId: '1',
    maxStalled: 3,
    stalledBefore: 0,
    schedule,
    steps: [{ sweep: 'A', step: 'detect', commands: [['ZRANGEBYSCORE', `emq:{${queue}}:active`, '-inf', '1700000000000']], replies: [['1']] }],
    readout: READOUT,
  };
}

const replays = (...list: ReplayJson[]): ReplaysJson => ({ version: '0.1.0', schema: 1, server: SERVER, replays: list });

const fromMarkup = (s: string): string =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&');

interface Drawn {
  readonly top: number;
  readonly width: number;
  readonly heading: { x: number; y: number; cls: string; line: string }[];
  /** The y of the lane heads' boxes, which the heading must stay above. */
  readonly laneHeadY: number;
}

/** Each drawing of a standalone SVG: its heading's lines, and where its lane heads begin. */
function drawings(svg: string): { height: number; drawn: Drawn[] } {
  const width = Number(/<svg [^>]*width="(\d+)"/.exec(svg)?.[1]);
  const height = Number(/<svg [^>]*height="(\d+)"/.exec(svg)?.[1]);
  const parts = svg.split(/<g transform="translate\(0,(\d+)\)"><rect x="0" y="0"/).slice(1);
  const drawn: Drawn[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const body = parts[i + 1] ?? '';
    const heading = [...body.matchAll(/<text x="(\d+)" y="(\d+)" class="(title|subtitle)">([^<]*)<\/text>/g)].map((m) => ({
      x: Number(m[1]),
      y: Number(m[2]),
      cls: m[3] ?? '',
      line: fromMarkup(m[4] ?? ''),
    }));
    const laneTop = Number(/<g transform="translate\(0,(\d+)\)"><g class="lane-head/.exec(body)?.[1]);
    const laneRect = Number(/<g class="lane-head [^"]*"><rect x="-?\d+" y="(\d+)"/.exec(body)?.[1]);
    drawn.push({ top: Number(parts[i]), width, heading, laneHeadY: laneTop + laneRect });
  }
  return { height, drawn };
}

/** Every heading line fits the width by the diagram's own estimate, and reads back as the whole text. */
function assertHeadingFits(svg: string, titles: readonly string[]): Drawn[] {
  const { drawn } = drawings(svg);
  assert.equal(drawn.length, titles.length);
  drawn.forEach((d, i) => {
    assert.ok(d.heading.length >= 2, 'a title and a subtitle');
    for (const { x, line, cls } of d.heading) {
      const px = cls === 'title' ? 13 : 12;
      assert.ok(x + textWidth(line, px) <= d.width - x, `${cls} line ${JSON.stringify(line)} is ${x + textWidth(line, px)} px wide of ${d.width}`);
    }
    const title = d.heading
      .filter((h) => h.cls === 'title')
      .map((h, n) => (n === 0 ? h.line : h.line.replace(/^ {2}/, '')))
      .join('');
    assert.equal(title.replace(/ /g, ''), (titles[i] ?? '').replace(/ /g, ''), 'the title, nothing of it cut');
    const last = Math.max(...d.heading.map((h) => h.y));
    assert.ok(last + 4 < d.laneHeadY, `the heading (to y ${last}) stays above the lane heads (from y ${d.laneHeadY})`);
    assert.deepEqual(
      d.heading.map((h) => h.y),
      [...d.heading.map((h) => h.y)].sort((a, b) => a - b),
    );
  });
  return drawn;
}

const heading = (mode: string, queue: string): string =>
  `${mode}: sweeps A and B on job 1 (lease expired, stalled 0, max-stalled 3); keys below are under emq:{${queue}}:`;

test('a long queue name wraps the heading onto more lines, within the width, and the drawing grows to hold them', () => {
  // explain --queue orders-stalled-recovery: both modes, each on the queue with its mode's name after it.
  const long = explainSvg(replays(replay('loop', 'orders-stalled-recovery-loop'), replay('atomic', 'orders-stalled-recovery-atomic')));
  const drawn = assertHeadingFits(long, [heading('loop', 'orders-stalled-recovery-loop'), heading('atomic', 'orders-stalled-recovery-atomic')]);
  assert.ok(
    drawn.some((d) => d.heading.filter((h) => h.cls === 'title').length > 1),
    'the atomic title, 1049 px on one line, takes two',
  );

  // The same replays on a short queue name: one title line each, and a shorter drawing.
  const short = explainSvg(replays(replay('loop', 'q-loop'), replay('atomic', 'q-atomic')));
  const shortDrawn = assertHeadingFits(short, [heading('loop', 'q-loop'), heading('atomic', 'q-atomic')]);
  for (const d of shortDrawn) assert.equal(d.heading.length, 2);
  assert.ok(drawings(long).height > drawings(short).height, 'the wrapped heading made the drawing taller');

  // The longest queue name --queue takes (100 characters, no space to break at) and a long schedule.
  const longest = `q${'x'.repeat(92)}-atomic`;
  const schedule = [
    'B:detect',
    'B:probe',
    'A:detect',
    'A:probe',
    'A:move',
    'A:read',
    'B:move',
    'B:read',
    'B:write',
    'A:write',
    'A:detect',
    'A:probe',
    'B:detect',
  ];
  assertHeadingFits(explainSvg(replays(replay('atomic', longest), replay('loop', longest, schedule))), [heading('atomic', longest), heading('loop', longest)]);
});

test("the counter race's heading fits as well", () => {
  const queue = `orders-${'y'.repeat(90)}`;
  const counter: CounterJson = {
    version: '0.1.0',
    schema: 1,
    server: SERVER,
    counter: 'client',
    queue,
    jobId: '1',
    before: 0,
    after: 1,
    steps: [{ sweep: 'A', step: 'read', commands: [['HGET', `emq:{${queue}}:job:1`, 'stalled']], replies: ['0'] }],
    readout: { expected: 2, reached: 1, lost: 1, extra: 0 },
  };
  assertHeadingFits(explainSvg(counter), [
    "counter (client): two client-side read-modify-write cycles, forced to interleave, on job 1's stalled field (0 before)",
  ]);
});
