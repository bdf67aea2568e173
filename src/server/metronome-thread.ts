/**
 * The metronome's own thread (see metronome.ts): it sleeps in Atomics.wait until the deadline the
 * main thread set, which a futex times to the microsecond where an event-loop timer counts whole
 * milliseconds, then posts one message to wake the main thread. A new deadline, or the stop flag,
 * ends the sleep early. Nothing but the shared words below passes between the threads.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DEADLINE, GENERATION, NO_DEADLINE, STOP, type MetronomeShared } from './metronome.js';

const { control, deadline } = workerData as MetronomeShared;
const port = parentPort;
let ticked = NO_DEADLINE;
while (port && Atomics.load(control, STOP) === 0) {
  // Read the generation first: a deadline set after this read changes it and ends any wait below.
  const generation = Atomics.load(control, GENERATION);
  const due = Atomics.load(deadline, DEADLINE);
  if (due === NO_DEADLINE || due === ticked) {
    Atomics.wait(control, GENERATION, generation);
    continue;
  }
  const waitMs = Number(due - process.hrtime.bigint()) / 1e6;
  if (waitMs > 0) {
    Atomics.wait(control, GENERATION, generation, waitMs);
    continue;
  }
  ticked = due;
  port.postMessage(null);
}
