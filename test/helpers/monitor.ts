/**
 * The commands a server ran while a test's work ran, per client connection, read with MONITOR:
 * round trips counted as the server saw them, against the figure a run reports.
 */
import type { Redis } from 'ioredis';

/**
 * Runs `work` with MONITOR open on `admin`'s server, and answers what it returned and each
 * connection's commands by its address, in the order run: the name upper-case, then the arguments,
 * space-separated. A script's own commands are left out. MONITOR's lines trail the replies a
 * little, so the answer waits for one more command, sent once `work` is done.
 */
export async function commandsBySource<T>(admin: Redis, work: () => Promise<T>): Promise<{ result: T; bySource: Map<string, string[]> }> {
  const monitor = await admin.monitor();
  const marker = `monitor-done-${Math.random().toString(16).slice(2)}`;
  const bySource = new Map<string, string[]>();
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (args[0]?.toUpperCase() === 'ECHO' && args[1] === marker) done();
    else if (source !== 'lua') bySource.set(source, [...(bySource.get(source) ?? []), args.map((arg, i) => (i === 0 ? arg.toUpperCase() : arg)).join(' ')]);
  });
  try {
    const result = await work();
    await admin.echo(marker);
    await finished;
    return { result, bySource };
  } finally {
    monitor.disconnect();
  }
}
