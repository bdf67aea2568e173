/**
 * The owner marker `emq:{Q}:owner`: the claim on a queue, and the record `emq-race clean` reads to
 * recognise a queue as this tool's and to delete a crashed run's keys by name. Its value is one
 * JSON object whose `tool` field is "emq-race"; a marker in any other form is not the tool's.
 *
 * A marker has a phase. A run writes it as `claiming`, with a short expiry, before it knows that
 * the queue is empty; only after a SCAN found no other key does the marker become `owned`, with
 * no expiry. Whatever fails in between, the marker is at worst a `claiming` one that expires by
 * itself, and `clean` removes nothing but such a marker. Markers written before the phase existed
 * read as `legacy`: those versions wrote the marker before checking the queue, so one may stand in
 * somebody else's queue, and `clean` trusts it no further than a `claiming` one.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { UnlikeRedisReply } from '../shared/errors.js';
import { LIMITS } from '../shared/model.js';

export const OWNER_TOOL = 'emq-race';

/** A run's random id: what tells one run's claim and keys from another's. */
export const newRunId = (): string => randomBytes(8).toString('hex');

/**
 * `claiming`: written, the queue not yet confirmed empty (expires by itself). `owned`: the queue
 * was empty when claimed, so the keys under it that carry the run's id are the run's. `legacy`:
 * no phase, or one this version does not know.
 */
export type OwnerPhase = 'claiming' | 'owned' | 'legacy';

export interface OwnerMarker {
  readonly tool: typeof OWNER_TOOL;
  /** The run's random id: what makes one run's claim different from another's, and what its job hashes carry. */
  readonly run: string;
  /** Jobs seeded: with the key layout, every key the run may have created. */
  readonly jobs: number;
  /** When the run claimed the queue, ms since the epoch (the client's clock; for people only). */
  readonly started: number;
  readonly host: string;
  readonly pid: number;
  /**
   * The run's process as the system tells it apart from a later one given the same pid (Linux:
   * the boot's id and the start time from /proc/PID/stat); absent where there is no /proc, and in
   * markers of older versions.
   */
  readonly procStart?: string;
  readonly phase: OwnerPhase;
  /**
   * A library run's library (src/libraries/): its keys are everything under `emq:{Q}:LIBRARY:`,
   * named by the library, so `clean` finds them by SCAN there rather than by name.
   */
  readonly library?: string;
}

/**
 * A marker's run id and host as a line may repeat them: a marker is a key anyone may have written,
 * and a field of another shape (a terminal's escape codes, a line break, thousands of characters)
 * is not printed. The run id as newRunId makes it; the host as a host name is.
 */
export function printableRun(marker: Pick<OwnerMarker, 'run'>): string | undefined {
  return /^[0-9a-f]{1,32}$/.test(marker.run) ? marker.run : undefined;
}

/** See printableRun: the host, where it is one and the pid is a process's. */
export function printableHost(marker: Pick<OwnerMarker, 'host' | 'pid'>): string | undefined {
  return marker.pid > 0 && /^[\w.-]{1,100}$/.test(marker.host) ? marker.host : undefined;
}

/** A run's marker as first written: `claiming`. */
export function newOwnerMarker(run: string, jobs: number, library?: string): OwnerMarker {
  const procStart = processStart(process.pid);
  return {
    tool: OWNER_TOOL,
    run,
    jobs,
    started: Date.now(),
    host: hostname(),
    pid: process.pid,
    ...(procStart !== undefined ? { procStart } : {}),
    phase: 'claiming',
    ...(library ? { library } : {}),
  };
}

/**
 * When the process `pid` started, as this machine's kernel counts it: the boot's id and field 22
 * of /proc/PID/stat (clock ticks since boot), so that a pid given again to another process, in
 * this boot or a later one, reads differently. Undefined where it cannot be read: no /proc (not
 * Linux), no such process, or one this user may not see.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces and parentheses itself: fields from 3 on follow the last ')'.
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[22 - 3];
    if (start === undefined || !/^\d+$/.test(start)) return undefined;
    return `${bootId()}/${start}`;
  } catch {
    return undefined;
  }
}

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

export function ownerValue(marker: OwnerMarker): string {
  return JSON.stringify(marker);
}

/**
 * The most jobs a marker can name: the most expired and live jobs a run seeds. `clean` goes through
 * every id up to the marker's count, so a larger one was not written by emq-race, and is not trusted.
 */
const MOST_MARKED_JOBS = LIMITS.jobs.max + LIMITS.live.max;

/**
 * The marker in a value (GET's reply at the marker's name), or undefined when the value was not
 * written by emq-race. A GET answered with anything but a string or nil (a peer that answers every
 * command with an integer) is no reply of a Redis: an UnlikeRedisReply, not a marker misread.
 */
export function parseOwnerValue(value: unknown): OwnerMarker | undefined {
  if (value !== null && typeof value !== 'string') throw new UnlikeRedisReply('GET', 'is neither a string nor nil');
  if (value === null || !value.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  const m = parsed as (Partial<Omit<OwnerMarker, 'phase'>> & { phase?: unknown }) | null;
  if (!m || m.tool !== OWNER_TOOL || typeof m.run !== 'string') return undefined;
  if (!Number.isSafeInteger(m.jobs) || (m.jobs as number) < 0 || (m.jobs as number) > MOST_MARKED_JOBS) return undefined;
  return {
    tool: OWNER_TOOL,
    run: m.run,
    jobs: m.jobs as number,
    // Shown as a date: one past what a Date holds (a marker anyone may have written) reads as unknown.
    started: typeof m.started === 'number' && Number.isFinite(new Date(m.started).getTime()) ? m.started : 0,
    host: typeof m.host === 'string' ? m.host : '',
    pid: typeof m.pid === 'number' ? m.pid : 0,
    ...(typeof m.procStart === 'string' && m.procStart.length <= 100 ? { procStart: m.procStart } : {}),
    phase: m.phase === 'claiming' || m.phase === 'owned' ? m.phase : 'legacy',
    // Only a plain word: it becomes part of a SCAN pattern.
    ...(typeof m.library === 'string' && /^[a-z0-9-]{1,40}$/.test(m.library) ? { library: m.library } : {}),
  };
}

/**
 * A run on this machine whose process still lives: its keys are in use. Where the marker recorded
 * when its process started and the system says when the process now holding that pid did, the two
 * must match: a pid given again to another process does not keep the queue. An older marker, or a
 * process this user may not see, is judged by whether the pid lives at all.
 */
export function stillRunning(marker: OwnerMarker, host = hostname()): boolean {
  if (marker.host !== host || !(marker.pid > 0) || marker.pid === process.pid) return false;
  if (marker.procStart !== undefined) {
    const now = processStart(marker.pid);
    if (now !== undefined) return now === marker.procStart;
  }
  try {
    process.kill(marker.pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM';
  }
}
