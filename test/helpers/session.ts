/**
 * A session on the suite's server for tests that call the tool's modules directly: opened before
 * the suite's tests, closed after, with interrupt handling as the CLI has it.
 */
import { after, before } from 'node:test';
import { watchInterrupts, type Interrupts } from '../../src/shared/interrupt.js';
import { closeSession, openSession, type Session } from '../../src/server/session.js';
import type { ServerHandle } from './servers.js';

export function useSession(handle: ServerHandle, ready: (session: Session, interrupts: Interrupts) => void): void {
  let session: Session | undefined;
  let interrupts: Interrupts | undefined;
  before(async () => {
    session = await openSession({ url: handle.url }, {});
    interrupts = watchInterrupts((line) => process.stderr.write(line));
    ready(session, interrupts);
  });
  after(async () => {
    interrupts?.dispose();
    if (session) await closeSession(session, false);
  });
}
