/**
 * A wait that ended only because this process stood still. A timer that fires far later than it
 * was due says that the event loop itself was frozen (Ctrl-Z or SIGSTOP, a debugger, a machine
 * starved of CPU), not that the server was slow: the server's replies may be sitting unread in the
 * socket, since a resumed process runs its due timers before it reads. Such a wait proves nothing
 * about the server and starts again (the connections' timeouts, connection.ts); what a run watches
 * is looked at again before anything is concluded (the heartbeat, queue/owner-claim.ts).
 */

/** How far past its due time a timer must fire for the process to count as having stood still, rather than busy. */
export const FROZEN_MS = 1_000;

/**
 * Calls `fire` once the process has waited `ms` awake. The wait goes in steps of at most
 * `frozenMs`; a step that comes due `frozenMs` or more late (the process stood still) starts the
 * whole wait again, so a wait is never judged on time in which the process could not have read a
 * reply. `hold` receives each step's timer, for the owner to clear.
 */
export function awakeTimeout(ms: number, fire: () => void, hold: (timer: NodeJS.Timeout) => void, frozenMs = FROZEN_MS): void {
  let waited = 0;
  const step = (): void => {
    const wait = Math.min(frozenMs, ms - waited);
    const due = performance.now() + wait;
    hold(
      setTimeout(() => {
        waited = performance.now() - due >= frozenMs ? 0 : waited + wait;
        if (waited >= ms) fire();
        else step();
      }, wait),
    );
  };
  step();
}
