/**
 * Loaded with `--import` (NODE_OPTIONS) into the CLI and, through its environment, into every
 * process it forks: in one started with a channel (a sweeper child of --processes, whose channel is
 * its fd 3), a `sleep` is started that holds a copy of that fd and outlives the child, its pid
 * appended to the file EMQ_RACE_TEST_HOLDERS names. The CLI itself has no channel and starts none.
 */
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const holders = process.env.EMQ_RACE_TEST_HOLDERS;

if (holders !== undefined && typeof process.send === 'function') {
  const holder = spawn('sleep', ['60'], { stdio: ['ignore', 'ignore', 'ignore', 3], detached: true });
  appendFileSync(holders, `${holder.pid}\n`);
  holder.unref();
}
