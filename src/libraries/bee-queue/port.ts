/**
 * Bee-Queue's stalled-job check (its checkStalledJobs script) ported to the application: the same
 * commands in the same order, each a round trip of its own, as a team would write it that moved
 * the script's logic into its code. Two ports:
 *
 *   naive    goes on after `LREM active 0 id` whatever LREM answered: every caller that listed the
 *            job in `stalling` pushes it back onto `waiting`;
 *   guarded  acts on the removal's reply, as the script does: only the caller whose LREM removed
 *            the job (a count above 0) pushes it.
 *
 * The script's steps, in order: the gate (`SET stallBlock 1 PX stallInterval NX`: a caller that
 * does not set it checks nothing), SMEMBERS `stalling`; if any, LREM each from `active`, LPUSH the
 * ones kept onto `waiting` (1,024 at a time), DEL `stalling`; then LRANGE `active` and SADD every
 * job still there into `stalling` (1,024 at a time), for the next check.
 *
 * The gate is one atomic command even here, so only one caller at a time gets in; but it lapses
 * after stallInterval, and `stalling` is deleted only after the loop: a second caller let in while
 * the first is still in its loop lists the same jobs again.
 */

/** Sends one command and resolves to its reply: each call is one round trip. */
export type Exec = (command: string, ...args: (string | number)[]) => Promise<unknown>;

export interface PortKeys {
  readonly stallBlock: string;
  readonly stalling: string;
  readonly waiting: string;
  readonly active: string;
}

/** The script's `maxUnpack`: ids per LPUSH and per SADD. */
const UNPACK = 1024;

/** What one check did: whether the gate let it in, and the ids it pushed onto `waiting`, in order. */
export interface PortedCheck {
  readonly passed: boolean;
  readonly moved: readonly string[];
}

/** One check, as round trips. */
export async function portedCheckStalledJobs(exec: Exec, keys: PortKeys, stallInterval: number, guarded: boolean): Promise<PortedCheck> {
  if ((await exec('SET', keys.stallBlock, '1', 'PX', stallInterval, 'NX')) === null) return { passed: false, moved: [] };
  const stalling = (await exec('SMEMBERS', keys.stalling)) as string[];
  const moved: string[] = [];
  if (stalling.length > 0) {
    for (const jobId of stalling) {
      const removed = Number(await exec('LREM', keys.active, 0, jobId));
      if (!guarded || removed > 0) moved.push(jobId);
    }
    for (let from = 0; from < moved.length; from += UNPACK) await exec('LPUSH', keys.waiting, ...moved.slice(from, from + UNPACK));
    await exec('DEL', keys.stalling);
  }
  const active = (await exec('LRANGE', keys.active, 0, -1)) as string[];
  for (let from = 0; from < active.length; from += UNPACK) await exec('SADD', keys.stalling, ...active.slice(from, from + UNPACK));
  return { passed: true, moved };
}
