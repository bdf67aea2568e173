/**
 * The atomic sweep as a Redis Function: one FCALL per sweep, run by the server from start to
 * finish like a script. The library is loaded for the run (see function-library.ts).
 */
import { callFunction } from '../lua/function-calls.js';
import { oneCallSweeper } from './one-call.js';
import type { Sweeper, SweeperContext } from './sweeper.js';

export function functionSweeper(context: SweeperContext): Sweeper {
  const name = context.functionName;
  if (name === undefined) throw new Error('the function mode needs its library loaded first');
  return oneCallSweeper(context, {
    send: (keys, argv) => {
      const reply = callFunction(context.redis, name, keys, argv);
      context.faults?.afterSend();
      return reply;
    },
  });
}
