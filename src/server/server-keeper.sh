# The embedded server's keeper: a POSIX shell between the tool and its redis-server (or
# valkey-server, or redict-server) that ties the server's life to the tool's. The tool holds the
# write end of a pipe on this shell's stdin (the lifeline); when that pipe closes, however the tool
# ended (a normal stop, a signal, a crash, SIGKILL), the keeper stops the server (SIGTERM, then
# SIGKILL after 5 s) and removes its data folder, then exits. Only a "keep" line sent first (--keep)
# lets the server outlive the tool; its folder still goes once the server stops.
#
# A shell, not a Node process: it starts in a millisecond and a few hundred kB where Node takes a
# tenth of a second of CPU and 40 MB, on every run that starts its own server.
#
# Run as `sh server-keeper.sh DIR BIN ARGS…` (see embedded-server.ts), with a fourth pipe (fd 3) on
# which it reports `pid N` once the server is started. The server writes to the keeper's stdout and
# stderr, which are the tool's pipes: the tool reads its readiness there.

dir=$1
shift

# The server: no stdin and no report pipe, only the output the tool reads.
"$@" </dev/null 3>&- &
pid=$!
# Set once the server is started, so that it keeps its own dispositions: a terminal's Ctrl-C, Ctrl-\ and
# hang-up are the tool's to handle (this group is its own anyway).
trap '' INT QUIT HUP PIPE
# The output pipes are the server's, for the tool to read. This shell says nothing there: a tool
# killed outright leaves no reader, and a line written then (the shell's "Terminated" when the
# server stops on a signal) would end the keeper before it removed the folder.
exec >/dev/null 2>&1

echo "pid $pid" >&3
exec 3>&-

# The lifeline is read by a shell of its own, so that this one can wait on the server meanwhile. At
# the lifeline's end without a "keep" line first (the tool done or gone), or on USR1 (this keeper
# was sent SIGTERM), it stops the server: SIGTERM, then SIGKILL if it still runs 5 s later. A TERM
# from this keeper (the server is gone) ends it at once. It waits on every child it starts, so that
# nothing of the keeper's outlives it.
lifeline='
pid=$1
stop() {
  kill -TERM "$pid" 2>/dev/null
  # A server paused by SIGSTOP would take its TERM only once let go, after the 5 s.
  kill -CONT "$pid" 2>/dev/null
  n=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$n" -ge 250 ]; then kill -KILL "$pid" 2>/dev/null; break; fi
    sleep 0.02
    n=$((n + 1))
  done
  exit 0
}
trap "exit 0" TERM
trap stop USR1
while IFS= read -r line; do
  case $line in *keep*) exit 3 ;; esac
done
stop
'
# A background job's stdin would be /dev/null: the lifeline goes to it through fd 4.
exec 4<&0 </dev/null
sh -c "$lifeline" emq-race-lifeline "$pid" <&4 >/dev/null 2>&1 &
reader=$!
exec 4<&-
# A SIGTERM sent here stops the server the same clean way (a kept server's reader is gone: not it).
trap 'kill -USR1 "$reader" 2>/dev/null' TERM
# A child's end wakes the wait below. The reader ends with exit 3 only after a "keep" line; any
# other end while the server lives (killed by hand, with any signal) leaves the lifeline unwatched,
# and the server would outlive the tool: it is stopped here the same way at once.
trap ':' CHLD

# A trapped signal ends a wait early: wait again while the server lives.
watched=1
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid"
  if [ "$watched" = 1 ] && ! kill -0 "$reader" 2>/dev/null; then
    watched=0
    wait "$reader"
    # The lifeline's own stop, run again on an input that ends at once: the same TERM, CONT, KILL.
    if [ $? -ne 3 ]; then sh -c "$lifeline" emq-race-lifeline "$pid" </dev/null >/dev/null 2>&1; fi
    # Kept, or stopped: no reader to pass a SIGTERM on to (its pid may be another process's by now).
    trap '' TERM
  fi
done
rm -rf "$dir"
if [ "$watched" = 1 ]; then
  kill -TERM "$reader" 2>/dev/null
  wait "$reader"
fi
exit 0
