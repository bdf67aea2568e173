/**
 * The function mode's library on the server, behind typed calls: loaded without REPLACE (a name
 * clash fails rather than overwriting anyone's code), called with FCALL, deleted by its name.
 */
import type { Redis } from 'ioredis';

/** FUNCTION LOAD of a library's whole source (see function-source.ts). */
export async function loadFunctionLibrary(redis: Redis, source: string): Promise<void> {
  await redis.call('FUNCTION', 'LOAD', source);
}

/** FUNCTION LIST LIBRARYNAME: the libraries whose names match `pattern` (an exact name matches itself alone). */
export async function listFunctionLibraries(redis: Redis, pattern: string): Promise<unknown[]> {
  const reply = await redis.call('FUNCTION', 'LIST', 'LIBRARYNAME', pattern);
  return Array.isArray(reply) ? reply : [];
}

/** FUNCTION DELETE of one library, by its exact name. */
export async function deleteFunctionLibrary(redis: Redis, library: string): Promise<void> {
  await redis.call('FUNCTION', 'DELETE', library);
}

/** FCALL: the reply's promise, returned as soon as the call is queued, so a caller can mark the moment it left. */
export function callFunction(redis: Redis, name: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  return redis.call('FCALL', name, keys.length, ...keys, ...args);
}
