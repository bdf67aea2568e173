/**
 * The owner marker `emq:{Q}:owner`: the claim on a queue, and the record `emq-race clean` reads to
 * recognise a queue as this tool's and to delete a crashed run's keys by name. Its value is one
 * JSON object whose `tool` field is "emq-race"; a marker in any other form is not the tool's.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export const OWNER_TOOL = 'emq-race';

/** A run's random id: what tells one run's claim and keys from another's. */
export const newRunId = (): string => randomBytes(8).toString('hex');


export interface OwnerMarker {
  readonly tool: typeof OWNER_TOOL;
  /** The run's random id: what makes one run's claim different from another's. */
  readonly run: string;
  /** Jobs seeded: with the key layout, every key the run may have created. */
  readonly jobs: number;
  /** When the run claimed the queue, ms since the epoch (the client's clock; for people only). */
  readonly started: number;
  readonly host: string;
  readonly pid: number;
}

export function newOwnerMarker(run: string, jobs: number): OwnerMarker {
  return { tool: OWNER_TOOL, run, jobs, started: Date.now(), host: hostname(), pid: process.pid };
}

export function ownerValue(marker: OwnerMarker): string {
  return JSON.stringify(marker);
}

/** The marker in a value, or undefined when the value was not written by emq-race. */
export function parseOwnerValue(value: string | null): OwnerMarker | undefined {
  if (value === null || !value.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  const m = parsed as Partial<OwnerMarker> | null;
  if (!m || m.tool !== OWNER_TOOL || typeof m.run !== 'string') return undefined;
  if (!Number.isSafeInteger(m.jobs) || (m.jobs as number) < 0) return undefined;
  return {
    tool: OWNER_TOOL,
    run: m.run,
    jobs: m.jobs as number,
    started: typeof m.started === 'number' ? m.started : 0,
    host: typeof m.host === 'string' ? m.host : '',
    pid: typeof m.pid === 'number' ? m.pid : 0,
  };
}
