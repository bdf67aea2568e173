/**
 * A terminal that closed under the run (a closed window, tmux kill-session, a dropped SSH session)
 * is left alone on the way out. On exit Node puts each standard stream that started on a terminal
 * back as it found it, and Node 20 aborts (exit 134, an assertion in its ResetStdio) when that
 * terminal has hung up. Node skips a stream whose descriptor now names another file, so each one
 * whose terminal is gone is pointed at /dev/null first: the process exits with its own code.
 * For every entry point whose streams may be a terminal: the command line and the sweeper
 * children of --processes, which share its stderr.
 */
import { closeSync, openSync } from 'node:fs';
import { isatty } from 'node:tty';

let watching = false;

export function leaveClosedTerminalAlone(): void {
  if (watching) return;
  watching = true;
  const startedOnTerminal = [0, 1, 2].filter((fd) => isatty(fd));
  if (startedOnTerminal.length === 0) return;
  process.on('exit', () => {
    for (const fd of startedOnTerminal) {
      // isatty asks the terminal itself, which answers no once it has hung up.
      if (isatty(fd)) continue;
      try {
        closeSync(fd);
        // The lowest free descriptor: `fd` itself, now /dev/null.
        openSync('/dev/null', fd === 0 ? 'r' : 'w');
      } catch {
        // Closed is enough: Node also skips a descriptor that is no longer open.
      }
    }
  });
}
