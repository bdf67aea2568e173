/**
 * The counter race on its own: two sweeps each add one to the job's `stalled` field. Inside a
 * script (HINCRBY) the server does read and write in one step, so both increments land. From the
 * client (HGET, then HSET of what it read plus one) the two cycles are forced to interleave
 * — read, read, write, write — and the second write puts back the value the first one wrote.
 */
import { loadScript, luaSource } from '../lua/registry.js';
import type { CounterForm } from './counter-forms.js';
import type { Stage } from './stage.js';
import { recordingExec, type Recorder, type WireStep } from './wire.js';

const INCREMENT_FIELD_LUA = luaSource('increment-field');

/** The counter's readout: `expected` and everything after it are computed by this tool. */
export interface CounterReadout {
  /** Increments the steps made: one per HINCRBY, or per write-back. */
  readonly expected: number;
  /** What the field gained: after − before. */
  readonly reached: number;
  /** Increments made that the field does not show. */
  readonly lost: number;
  /** What the field gained beyond the increments made. */
  readonly extra: number;
}

export interface CounterRace {
  readonly counter: CounterForm;
  readonly queue: string;
  readonly jobId: string;
  readonly before: number;
  /** The field's value read back from the server after both increments. */
  readonly after: number;
  readonly steps: WireStep[];
  readonly readout: CounterReadout;
}

/** Increments the field gained, against the `made` increments the steps made. */
export function counterReadout(before: number, after: number, made: number): CounterReadout {
  const reached = after - before;
  return { expected: made, reached, lost: Math.max(0, made - reached), extra: Math.max(0, reached - made) };
}

/** Increments a counter race's steps made: every HINCRBY, every write-back of a read. */
function incrementsMade(steps: readonly WireStep[]): number {
  return steps.filter((step) => step.step === 'increment' || step.step === 'write').reduce((sum, step) => sum + step.commands.length, 0);
}

export async function raceCounter(stage: Stage, queue: string, counter: CounterForm): Promise<CounterRace> {
  const { keys, jobId, admin } = stage;
  const jobKey = keys.job(jobId);
  const a = recordingExec(stage.connections[0]);
  const b = recordingExec(stage.connections[1]);
  const steps: WireStep[] = [];

  if (counter === 'in-script') {
    const sha = await loadScript(admin, INCREMENT_FIELD_LUA);
    stage.signal.throwIfAborted();
    // Sent in the same tick on two connections; the server runs one script, then the other.
    await Promise.all([a.exec('EVALSHA', sha, 1, jobKey, 'stalled'), b.exec('EVALSHA', sha, 1, jobKey, 'stalled')]);
    const sent: WireStep[] = [
      { sweep: 'A', step: 'increment', ...a.take() },
      { sweep: 'B', step: 'increment', ...b.take() },
    ];
    // The call that answered the lower value ran first.
    steps.push(...sent.sort((x, y) => Number(x.replies[0]) - Number(y.replies[0])));
  } else {
    // Each cycle reads into the client, then writes back what it read plus one.
    const readStep = async (sweep: 'A' | 'B', recorder: Recorder): Promise<number> => {
      stage.signal.throwIfAborted();
      const value = (await recorder.exec('HGET', jobKey, 'stalled')) as string | null;
      steps.push({ sweep, step: 'read', ...recorder.take() });
      return value === null ? 0 : Number(value);
    };
    const writeStep = async (sweep: 'A' | 'B', recorder: Recorder, value: number): Promise<void> => {
      stage.signal.throwIfAborted();
      await recorder.exec('HSET', jobKey, 'stalled', value);
      steps.push({ sweep, step: 'write', ...recorder.take() });
    };
    const readA = await readStep('A', a);
    const readB = await readStep('B', b);
    await writeStep('A', a, readA + 1);
    await writeStep('B', b, readB + 1);
  }

  const afterText = await admin.hget(jobKey, 'stalled');
  const after = afterText === null ? 0 : Number(afterText);
  return { counter, queue, jobId, before: stage.stalledBefore, after, steps, readout: counterReadout(stage.stalledBefore, after, incrementsMade(steps)) };
}

/** The JSON contract of a counter race (the server block is added by the caller). */
export function counterJson(race: CounterRace): object {
  return {
    counter: race.counter,
    queue: race.queue,
    jobId: race.jobId,
    before: race.before,
    after: race.after,
    steps: race.steps.map((step) => ({ sweep: step.sweep, step: step.step, commands: step.commands, replies: step.replies })),
    readout: race.readout,
    // `after` is read back from the server; the readout is computed by this tool from it and the steps.
    readoutSources: { before: 'client', after: 'server', expected: 'client', reached: 'client', lost: 'client', extra: 'client' },
  };
}
