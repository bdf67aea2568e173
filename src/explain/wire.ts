/**
 * What went over the wire during a replay: every command a sweep sent, argument by argument, and
 * the server's reply to it, as the client library handed it back. The timeline and the JSON print
 * these records and nothing else, so every reply shown is one the server gave.
 */
import type { Redis } from 'ioredis';
import type { Exec } from '../sweepers/sweeper.js';
import type { SweepName } from './schedule.js';
import type { Reply } from '../shared/model.js';

export interface WireStep {
  readonly sweep: SweepName;
  /** A loop step (detect, probe, read, move, write), `sweep` for a script, or a counter step. */
  readonly step: string;
  /** Each command as its arguments, the command name first. Empty when the step had nothing to do. */
  readonly commands: readonly (readonly string[])[];
  readonly replies: readonly Reply[];
}

export interface Recorder {
  /** Sends one command and records it with its reply. */
  readonly exec: Exec;
  /** The commands and replies recorded since the last call, for the step that just ended. */
  take(): { commands: string[][]; replies: Reply[] };
}

export function recordingExec(redis: Redis): Recorder {
  let commands: string[][] = [];
  let replies: Reply[] = [];
  return {
    exec: async (command, ...args) => {
      commands.push([command, ...args.map(String)]);
      const reply = (await redis.call(command, ...args)) as Reply;
      replies.push(reply);
      return reply;
    },
    take() {
      const taken = { commands, replies };
      commands = [];
      replies = [];
      return taken;
    },
  };
}

/** Does a reply (an id, or an array of ids) name the job? */
export function replyNames(reply: Reply | undefined, jobId: string): boolean {
  if (Array.isArray(reply)) return reply.some((item) => item === jobId);
  return reply === jobId;
}
