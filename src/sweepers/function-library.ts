/**
 * The function mode's library: the atomic sweep as a Redis Function. Function and library names
 * are global to the server, so both carry the run's id; the library is loaded without REPLACE (a
 * name clash fails rather than overwriting anyone's code) and deleted by that exact name.
 */
import type { Redis } from 'ioredis';
import { serverError } from '../shared/errors.js';
import { deleteFunctionLibrary, listFunctionLibraries, loadFunctionLibrary } from '../lua/function-calls.js';
import { functionLibrarySource, sweepFunctionNames, type SweepFunction } from '../lua/function-source.js';

export function librarySource(fn: SweepFunction): string {
  return functionLibrarySource(fn.library, fn.name);
}

/** Whether the server knows FUNCTION (Redis 7+, Valkey): asks about a library that cannot exist. */
export async function serverHasFunctions(redis: Redis): Promise<boolean> {
  try {
    await listFunctionLibraries(redis, 'emq_race_probe_');
    return true;
  } catch (err) {
    if (err instanceof Error && /unknown command|unknown subcommand/i.test(err.message)) return false;
    throw err;
  }
}

export async function loadSweepFunction(redis: Redis, runId: string): Promise<SweepFunction> {
  const fn = sweepFunctionNames(runId);
  if (!(await serverHasFunctions(redis))) {
    throw serverError('the function mode needs a server with Functions (Redis 7 or later, or Valkey)');
  }
  await loadFunctionLibrary(redis, librarySource(fn));
  return fn;
}

export async function deleteSweepFunction(redis: Redis, fn: SweepFunction): Promise<void> {
  await deleteFunctionLibrary(redis, fn.library);
}
