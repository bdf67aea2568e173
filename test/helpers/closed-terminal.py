"""
Runs a program on a pseudo-terminal of its own, then closes that terminal the way a closed window,
tmux kill-session or a dropped SSH session does, and reports how the program ended.

    python3 closed-terminal.py PROGRAM ARG...

The program is the session leader of a new pseudo-terminal (its controlling terminal, and its
stdin, stdout and stderr), 80 columns wide. This helper prints one JSON line on stdout once the
program runs: {"pid": N}. On a line "close" on its stdin it closes the terminal's master side (the
kernel then hangs the terminal up and sends SIGHUP to the session leader), and sends a second
SIGHUP, as the shell of a closed window passes its own on to its jobs; once the program has taken
both it prints {"hungup": true}. When the program has ended it
prints {"exit": CODE or null, "signal": NUMBER or null, "output": TEXT}: the output is what the
program wrote on the terminal before it closed.

Only the standard library: python3's pty, on any Linux.
"""
import fcntl
import json
import os
import pty
import select
import signal
import struct
import sys
import termios
import time

def sighup_pending(pid):
    """
    Whether a SIGHUP waits to be delivered to `pid` (the SigPnd and ShdPnd masks of /proc). Not for a
    program that has ended: its masks stay as they were until this helper reaps it, and a hang-up
    that came as it ended would be pending for ever.
    """
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.split(":", 1) for line in status if ":" in line)
    except OSError:
        return False
    if fields.get("State", "").split()[:1] == ["Z"]:
        return False
    masks = [fields.get("SigPnd", "0"), fields.get("ShdPnd", "0")]
    return any(int(mask.strip(), 16) & (1 << (signal.SIGHUP - 1)) for mask in masks)


pid, master = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])

fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
print(json.dumps({"pid": pid}), flush=True)

output = b""
open_master = True
commands = b""
while open_master:
    readable, _, _ = select.select([master, sys.stdin.fileno()], [], [], 0.1)
    if master in readable:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            # The program is gone (its side closed): nothing to hang up.
            break
        output += chunk
    if sys.stdin.fileno() in readable:
        read = os.read(sys.stdin.fileno(), 1024)
        commands += read
        if b"close" in commands or not read:
            os.close(master)
            open_master = False
            # Two hang-ups pending at once are one signal: the second is sent once the kernel's
            # has been taken, as the shell's comes after it.
            while sighup_pending(pid):
                time.sleep(0.001)
            try:
                os.kill(pid, signal.SIGHUP)
            except ProcessLookupError:
                pass
            while sighup_pending(pid):
                time.sleep(0.001)
            print(json.dumps({"hungup": True}), flush=True)

_, status = os.waitpid(pid, 0)
if open_master:
    os.close(master)
print(
    json.dumps(
        {
            "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            "output": output.decode("utf-8", "replace"),
        }
    ),
    flush=True,
)
