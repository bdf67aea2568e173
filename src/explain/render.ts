/**
 * The timeline for people: two columns, sweep A and sweep B, one row per step in the order the
 * steps ran, each with the commands sent (→) and the server's replies (←), then the readout. The
 * only shortening is cosmetic: keys lose their queue prefix (named in the header) and a script's
 * SHA1 shows its first 8 characters. The JSON carries everything in full.
 */
import { formatArgs, formatReply } from '../server/command-text.js';
import type { CounterRace, CounterReadout } from './counter-race.js';
import { isCleanReadout, readoutRows, type Readout } from './readout.js';
import { wrap, wrapLines } from '../shared/text.js';
import type { Replay } from './replay.js';
import { replyNames, type WireStep } from './wire.js';
import { DEAD_LETTER_STEP } from '../sweepers/loop-steps.js';
import { replayOf } from '../sweepers/strategies.js';

/** The widest a sweep's column gets, however wide the terminal: wider reads worse. */
const COLUMN = 46;
const GUTTER = ' │ ';

/** The replay a step belongs to, for the notes that read another of its steps. */
export interface NoteContext {
  /** Every step of the replay, in the order they ran (as the replay's JSON gives them, for the page's drawing too). */
  readonly steps: readonly { readonly sweep: string; readonly step: string; readonly commands: WireStep['commands'] }[];
  readonly maxStalled?: number;
  /**
   * Where the job stands at the end, read back from the server: a script's reply names the jobs it
   * moved, not where to, and the one sweep that moved the job put it there.
   */
  readonly endedIn?: readonly string[];
}

/**
 * Why a step sent nothing. A dead-letter step whose sweep wrote the counter back held the job: it
 * sent nothing because that write stayed below max-stalled (the loop dead-letters only on reaching
 * it), which its write step shows. Any other empty step belongs to a sweep that never saw the job,
 * or whose probe dropped it. Without the replay's steps, an empty dead-letter step says only what
 * is true either way.
 */
function idleNote(step: WireStep, context: NoteContext | undefined): string {
  if (step.step === DEAD_LETTER_STEP) {
    if (context === undefined) return 'nothing to send: no dead letter due';
    const wrote = context.steps.find((s) => s.sweep === step.sweep && s.step === 'write')?.commands[0]?.[3];
    if (wrote !== undefined) {
      const limit = context.maxStalled === undefined ? 'max-stalled' : `max-stalled ${context.maxStalled}`;
      return `nothing to send: stalled ${wrote} is below ${limit}, no dead letter due`;
    }
  }
  return 'nothing to send: this sweep has no job';
}

/**
 * What a step's replies mean for the job, in a few words, read from the replies themselves (and,
 * for a step that sent nothing, from the replay's other steps when `context` gives them).
 */
export function noteFor(step: WireStep, jobId: string, context?: NoteContext): string {
  const job = `job ${jobId}`;
  const first = step.replies[0];
  if (step.commands.length === 0) return idleNote(step, context);
  switch (step.step) {
    case 'detect':
      return replyNames(first, jobId) ? `finds ${job} expired` : 'finds nothing expired';
    case 'probe':
      return first === null ? `lease gone: drops ${job}` : 'lease still expired: goes on';
    case 'move': {
      const removed = first === 1 ? 'takes it out of active' : 'ZREM was a no-op';
      const second = step.replies[1];
      const put =
        step.commands[1]?.[0] === 'ZADD'
          ? second === 0
            ? 'adds it to pending again (already there)'
            : 'adds it to pending'
          : `pushes it: pending holds ${String(second)}`;
      return `${removed}; ${put}`;
    }
    case 'read':
      return `reads stalled = ${first === null ? 0 : String(first)}`;
    case 'write': {
      const args = step.commands[0] ?? [];
      const state = args.indexOf('state');
      return `writes stalled = ${args[3] ?? '?'}${state < 0 ? '' : `, state = ${args[state + 1] ?? '?'}`}`;
    }
    case DEAD_LETTER_STEP: {
      const taken = first === 0 ? 'finds no entry in pending to take' : 'takes one entry out of pending';
      const dead = step.replies[1] === 0 ? 'adds it to dead again (already there)' : 'adds it to dead';
      return `reached max-stalled: ${taken}; ${dead}; state = dead`;
    }
    case 'sweep': {
      if (!replyNames(first, jobId)) return 'found nothing: ran second';
      const [to] = context?.endedIn ?? [];
      return context?.endedIn?.length === 1 && (to === 'pending' || to === 'dead')
        ? `moved ${job} to ${to}, counted its stall`
        : `moved ${job}, counted its stall`;
    }
    case 'increment':
      return `stalled is now ${String(first)}`;
    default:
      return '';
  }
}

function cellLines(step: WireStep, prefix: string, jobId: string, column: number, context: NoteContext): string[] {
  const lines = [step.step];
  step.commands.forEach((command, i) => {
    const sent = `→ ${formatArgs(command, prefix)}`;
    const reply = step.replies[i];
    const answer = reply === undefined ? '' : `← ${formatReply(reply)}`;
    // A short exchange reads best on one line; a long one keeps its reply on a line of its own.
    if (sent.length + 2 + answer.length <= column) lines.push(`${sent}  ${answer}`.trimEnd());
    else lines.push(...wrap(sent, column, '    '), ...(answer ? wrap(answer, column, '    ') : []));
  });
  lines.push(...wrap(`= ${noteFor(step, jobId, context)}`, column, '    '));
  return lines;
}

/** Two columns side by side, numbered, fitted to `width`: each sweep gets half of what is left. */
function renderTimeline(steps: readonly WireStep[], prefix: string, jobId: string, width: number, context: Omit<NoteContext, 'steps'>): string[] {
  const number = String(steps.length).length;
  const column = Math.min(COLUMN, Math.floor((width - number - 2 - GUTTER.length) / 2));
  const out = [`${' '.repeat(number)}  ${'sweep A'.padEnd(column)}${GUTTER}sweep B`, `${'─'.repeat(number + 2 + column)}─┼─${'─'.repeat(column)}`];
  steps.forEach((step, i) => {
    const lines = cellLines(step, prefix, jobId, column, { steps, ...context });
    lines.forEach((line, j) => {
      const num = j === 0 ? String(i + 1).padStart(number) : ' '.repeat(number);
      const left = step.sweep === 'A' ? line : '';
      const right = step.sweep === 'B' ? line : '';
      out.push(`${num}  ${left.padEnd(column)}${GUTTER}${right}`.trimEnd());
    });
  });
  return out;
}

/** The plain-words verdict under a replay's readout; `maxStalled` judges a job that ended in dead. */
export function verdict(readout: Readout, jobId: string, maxStalled: number): string {
  if (isCleanReadout(readout)) return `no anomaly: job ${jobId} was recovered once and its stall was counted once.`;
  const parts: string[] = [];
  if (readout.recoverCount > 1) parts.push(`job ${jobId} was recovered ${readout.recoverCount} times`);
  if (readout.pendingEntries > 1) parts.push(`it stands ${readout.pendingEntries} times in pending (it would run ${readout.pendingEntries} times)`);
  if (readout.endedIn.length > 1) parts.push(`it ended in ${readout.endedIn.join(' and ')} at once`);
  if (readout.lostIncrements > 0) parts.push(`${readout.lostIncrements} stall increment${readout.lostIncrements === 1 ? ' was' : 's were'} lost`);
  if (readout.extraIncrements > 0) parts.push(`the counter rose ${readout.extraIncrements} more than the recoveries`);
  if (readout.overcountedStalls > 0) {
    const over = readout.overcountedStalls;
    parts.push(`its one stall was counted ${over + 1} times (${over} over-counted stall${over === 1 ? '' : 's'})`);
  }
  // The counter ran ahead of the stalls and reached the limit: a healthy job that will never run again.
  if (readout.endedIn.includes('dead') && readout.realStalled < maxStalled)
    parts.push(
      `it was dead-lettered early (in dead after ${readout.realStalled} real stall${readout.realStalled === 1 ? '' : 's'}, below max-stalled ${maxStalled})`,
    );
  if (readout.recoverCount === 0) parts.push(`no sweep moved job ${jobId}`);
  return `anomaly: ${parts.join('; ')}.`;
}

/** The fields of a replay its heading names: the terminal's and the page's drawing's alike. */
interface ReplayHeading {
  readonly mode: string;
  readonly queue: string;
  readonly jobId: string;
  readonly stalledBefore: number;
  readonly maxStalled: number;
  readonly schedule: readonly string[];
}

/** A replay's title: the mode, the job and its start, and the prefix the keys below leave out. */
export function replayTitle(replay: ReplayHeading): string {
  return `${replay.mode}: sweeps A and B on job ${replay.jobId} (lease expired, stalled ${replay.stalledBefore}, max-stalled ${replay.maxStalled}); keys below are under emq:{${replay.queue}}:`;
}

/** Under the title: the loop's schedule, or the order the server ran the two scripts in. */
export function replayOrder(replay: ReplayHeading): string {
  return replayOf(replay.mode) === 'loop'
    ? `schedule: ${replay.schedule.join(',')}`
    : `both EVALSHA sent at the same moment; the server ran ${replay.schedule.map((s) => s.split(':')[0]).join(' then ')} (from the replies)`;
}

export function renderReplay(replay: Replay, width: number): string {
  const prefix = `emq:{${replay.queue}}:`;
  const fit = (lines: readonly string[]): string[] => lines.map((line) => wrapLines(line, width));
  const header = [
    ...fit([replayTitle(replay)]),
    ...(replayOf(replay.mode) === 'loop' ? scheduleLines(replay.schedule, width) : fit([replayOrder(replay)])),
    '',
  ];
  const rows = readoutRows(replay.readout, replay.jobId, replay.stalledBefore);
  const label = Math.max(...rows.map((r) => r.label.length));
  const value = Math.max(...rows.map((r) => r.value.length));
  const readout = [
    '',
    `readout (${READOUT_LEGEND}):`,
    ...rows.map((r) => `  ${r.label.padEnd(label)}  ${r.value.padEnd(value)}  ${r.source.padEnd(6)}  ${r.meaning}`),
    verdict(replay.readout, replay.jobId, replay.maxStalled),
  ];
  return [
    ...header,
    ...renderTimeline(replay.steps, prefix, replay.jobId, width, { maxStalled: replay.maxStalled, endedIn: replay.readout.endedIn }),
    ...fit(readout),
  ].join('\n');
}

/**
 * The schedule as a line to copy: on the `schedule:` line when it fits there, else on lines of its
 * own, broken only after a comma, so no step is ever split and the lines joined (indent dropped)
 * are the `--schedule` value again.
 */
function scheduleLines(schedule: readonly string[], width: number): string[] {
  const whole = `schedule: ${schedule.join(',')}`;
  if (whole.length <= width) return [whole];
  const indent = '  ';
  const lines = ['schedule:'];
  let line = indent;
  schedule.forEach((entry, i) => {
    const item = i < schedule.length - 1 ? `${entry},` : entry;
    if (line.length > indent.length && line.length + item.length > width) {
      lines.push(line);
      line = indent;
    }
    line += item;
  });
  lines.push(line);
  return lines;
}

export function renderCounter(race: CounterRace, width: number): string {
  const prefix = `emq:{${race.queue}}:`;
  const how =
    race.counter === 'in-script' ? 'two HINCRBY inside scripts, sent at the same moment' : 'two client-side read-modify-write cycles, forced to interleave';
  const { expected, reached, lost, extra } = race.readout;
  const made = race.counter === 'in-script' ? 'HINCRBY' : 'write';
  const rows: [string, string, 'server' | 'client', string][] = [
    // The value before the steps is the one the replay seeded, not a read: only the one after is the server's.
    ['before', String(race.before), 'client', 'the value the field was seeded with'],
    ['after', String(race.after), 'server', 'the field read back after the steps'],
    ['expected', `+${expected}`, 'client', `one per ${made} the steps made`],
    ['reached', `+${reached}`, 'client', 'what the field gained'],
    ['lost', String(lost), 'client', 'expected increments the field does not show'],
    ...(extra > 0 ? [['extra', String(extra), 'client', 'increments beyond those made'] as [string, string, 'client', string]] : []),
  ];
  const value = Math.max(...rows.map((r) => r[1].length));
  const fit = (lines: readonly string[]): string[] => lines.map((line) => wrapLines(line, width));
  return [
    ...fit([`counter (${race.counter}): ${how}, on job ${race.jobId}'s stalled field (${race.before} before); keys below are under ${prefix}`, '']),
    ...renderTimeline(race.steps, prefix, race.jobId, width, {}),
    ...fit([
      '',
      `readout (${READOUT_LEGEND}):`,
      ...rows.map(([label, shown, source, meaning]) => `  ${label.padEnd(8)}  ${shown.padEnd(value)}  ${source}  ${meaning}`),
      counterVerdict(race.readout),
    ]),
  ].join('\n');
}

/** Says what the two sources of a readout are. */
export const READOUT_LEGEND = 'server: read back from the server; client: computed by this tool';

export function counterVerdict(readout: CounterReadout): string {
  if (readout.lost > 0) return `anomaly: ${readout.lost} increment${readout.lost === 1 ? ' was' : 's were'} lost.`;
  if (readout.extra > 0) return `anomaly: the field gained ${readout.extra} more than the increments made.`;
  return `no anomaly: all ${readout.expected} increments landed.`;
}
