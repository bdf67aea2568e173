/**
 * What a library's folder hands the tool: one mode's run on a queue, claim to clean-up, as the
 * library's recovery runs it. Apart from the table, which loads it, so that neither imports the other.
 */
import type { Interrupts } from '../shared/interrupt.js';
import type { Session } from '../server/session.js';
import type { ModeRun, RunResult } from '../shared/model.js';

export type LibraryRunner = (session: Pick<Session, 'admin' | 'target' | 'raceTarget'>, run: ModeRun, interrupts: Interrupts) => Promise<RunResult>;
