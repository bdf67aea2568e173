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
#
# BIN may be a wrapper (a script that runs the real server as its child, without exec): the pid
# started here is then the wrapper's, and a signal to it alone would leave the server running,
# holding the tool's pipes. The tool asks the server its own pid once it is up and, when it differs,
# sends a `pid N` line on the lifeline: from then on that is the pid stopped, and the folder stays
# until it too has ended.

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
started=$1
pid=${4:-$1}
dir=$2
end() {
  kill -TERM "$1" 2>/dev/null
  # A server paused by SIGSTOP would take its TERM only once let go, after the 5 s.
  kill -CONT "$1" 2>/dev/null
  n=0
  while kill -0 "$1" 2>/dev/null; do
    if [ "$n" -ge 250 ]; then kill -KILL "$1" 2>/dev/null; break; fi
    sleep 0.02
    n=$((n + 1))
  done
}
stop() {
  end "$pid"
  # A wrapper that goes on once its server has ended would hold the folder and the pipes: it goes too.
  if [ "$pid" != "$started" ]; then end "$started"; fi
  exit 0
}
trap "exit 0" TERM
trap stop USR1
while IFS= read -r line; do
  case $line in
    *keep*) exit 3 ;;
    # The real server under a wrapper: the one to stop, and (in the folder, for the keeper) to outlive.
    "pid "[1-9]*) pid=${line#pid }; echo "$pid" >"$dir/$3" ;;
  esac
done
stop
'
# A background job's stdin would be /dev/null: the lifeline goes to it through fd 4.
exec 4<&0 </dev/null
# Where the reader leaves the real server's pid when the tool reports one (a wrapper's child).
real=.emq-race-server-pid
sh -c "$lifeline" emq-race-lifeline "$pid" "$dir" "$real" <&4 >/dev/null 2>&1 &
reader=$!
exec 4<&-
# A SIGTERM sent here stops the server the same clean way (a kept server's reader is gone: not it).
trap 'kill -USR1 "$reader" 2>/dev/null' TERM
# A child's end wakes the wait below. The reader ends with exit 3 only after a "keep" line; any
# other end while the server lives (killed by hand, with any signal) leaves the lifeline unwatched,
# and the server would outlive the tool: it is stopped here the same way at once.
trap ':' CHLD

# The server's pid: the one started here, or the real server's under a wrapper once reported.
server() {
  s=$(cat "$dir/$real" 2>/dev/null)
  echo "${s:-$pid}"
}

# A trapped signal ends a wait early: wait again while the server lives. A wrapper's server is no
# child of this shell's to wait on: once the wrapper has ended, one that still runs is watched by
# its pid.
watched=1
while kill -0 "$pid" 2>/dev/null || kill -0 "$(server)" 2>/dev/null; do
  if kill -0 "$pid" 2>/dev/null; then wait "$pid"; else sleep 0.05; fi
  if [ "$watched" = 1 ] && ! kill -0 "$reader" 2>/dev/null; then
    watched=0
    wait "$reader"
    # The lifeline's own stop, run again on an input that ends at once: the same TERM, CONT, KILL.
    if [ $? -ne 3 ]; then sh -c "$lifeline" emq-race-lifeline "$pid" "$dir" "$real" "$(server)" </dev/null >/dev/null 2>&1; fi
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
