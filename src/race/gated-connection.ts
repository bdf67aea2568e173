/**
 * A connection whose every round trip first waits for a turn: `call`, `evalsha`, `eval`, and a
 * MULTI's `exec` (queued in the client, then sent whole: one round trip, one turn). Every sweeper
 * sends its commands through these, so one gate sees all of a sweeper's traffic whatever the
 * strategy. Other methods go straight through: no sweeper uses them.
 */
import type { Redis } from 'ioredis';

export interface Gate {
  /** Resolves when the command named `label` (in lower case) may go. */
  turn(label: string): Promise<void>;
  /** The command of the turn has its reply (or failed). */
  done(): void;
}

export function gatedConnection(redis: Redis, gate: Gate): Redis {
  const gated = async <T>(label: string, send: () => Promise<T>): Promise<T> => {
    await gate.turn(label);
    try {
      return await send();
    } finally {
      gate.done();
    }
  };
  return new Proxy(redis, {
    get(target, property) {
      if (property === 'call') return (command: string, ...args: (string | number)[]) => gated(command.toLowerCase(), () => target.call(command, ...args));
      if (property === 'evalsha' || property === 'eval') {
        return (...args: (string | number)[]) => gated(property, () => (target[property] as (...a: (string | number)[]) => Promise<unknown>)(...args));
      }
      if (property === 'multi') {
        return () => {
          const transaction = target.multi();
          const exec = transaction.exec.bind(transaction);
          transaction.exec = (() => gated('exec', () => exec())) as typeof transaction.exec;
          return transaction;
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
