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
# BIN may be a wrapper (a script that runs the real server as its child, without exec). Where
# setsid is at hand (util-linux, on Linux), BIN ARGS run in a process group (a session) of their
# own, whose number is the pid started here: "running" means any process of that group runs, and
# stopping signals the whole group, so that a wrapper's server still starting, a wrapper's other
# children, and a server a wrapper left in the background when it exited go with it, while this
# keeper and its lifeline reader, in the tool's detached group, are never among them. The started
# process reports its own pid on fd 3 before it leaves this keeper's group, so that a keeper killed
# from outside leaves a server that the tool can reach: in this group until then, in its own after.
# A server that a wrapper puts in a session of its own is outside the group: the tool names it on
# the lifeline once it is up, and one whose group has emptied before that (`setsid -f SERVER`) the
# keeper finds itself (adrift, below).
# Without setsid the server shares this keeper's group and one pid is watched and stopped: the
# tool asks the server its own pid once it is up and, when it differs, sends a `pid N` line on the
# lifeline; from then on that is the pid stopped, and the folder stays until it too has ended.

dir=$1
shift
# The run's port, from the server's own arguments: a server a wrapper leaves unnamed is known by it.
port=
for arg; do
  if [ "$prev" = --port ]; then port=$arg; fi
  prev=$arg
done

# The server: no stdin and no report pipe, only the output the tool reads. setsid does not fork
# here: a background job of this shell is no group leader, so setsid execs in place and the
# group's number is the pid started.
if command -v setsid >/dev/null 2>&1; then
  grouped=1
  sh -c 'echo "pid $$" >&3 && exec setsid "$@" 3>&-' emq-race-server "$@" </dev/null &
  pid=$!
else
  grouped=0
  "$@" </dev/null 3>&- &
  pid=$!
fi
# Set once the server is started, so that it keeps its own dispositions: a terminal's Ctrl-C, Ctrl-\ and
# hang-up are the tool's to handle (this group is its own anyway).
trap '' INT QUIT HUP PIPE
# The output pipes are the server's, for the tool to read. This shell says nothing there: a tool
# killed outright leaves no reader, and a line written then (the shell's "Terminated" when the
# server stops on a signal) would end the keeper before it removed the folder. Fd 9 keeps the
# output pipe, never written, only to know it again: a server that a wrapper forked away from its
# group still writes to it (adrift, below), while a daemonized one, or a user's client, does not.
exec 9>&1 >/dev/null 2>&1

if [ "$grouped" = 0 ]; then echo "pid $pid" >&3; fi
exec 3>&-

# Whether a process (PID) or a process group (-PGID) still has a member that has not ended. kill -0
# answers for a zombie too, and a server that a wrapper left behind is reaped by whatever adopted
# it, late or never (a container's first process may reap nothing): where /proc tells, a zombie has
# ended. Shared by this shell and the lifeline's.
live='
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  [ -r /proc/self/stat ] || return 0
  case $1 in
    -*)
      want=${1#-}
      for f in /proc/[0-9]*/stat; do
        { read -r s <"$f"; } 2>/dev/null || continue
        # The fields after the command name, which may hold spaces and parentheses: state, parent, group.
        set -- ${s##*") "}
        [ "$3" = "$want" ] && [ "$1" != Z ] && return 0
      done
      return 1
      ;;
    *)
      { read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
      set -- ${s##*") "}
      [ "$1" != Z ]
      ;;
  esac
}
# Whether process PID belongs to this start: it works in the run folder, or has that folder as one
# of its arguments, as a server does that has not yet moved into it (and a forked setsid of a
# wrapper, before it runs the server). No other run has that folder. Checked before a pid outside
# the group is stopped, since nothing reserves it.
ours() {
  # The arguments first: a server moves into its folder before it gives up its arguments for its
  # title. A folder removed from outside meanwhile still names the one the server works in.
  grep -qzxF -e "$dir" "/proc/$1/cmdline" 2>/dev/null || [ "/proc/$1/cwd" -ef "$dir" ] ||
    [ "$(readlink "/proc/$1/cwd" 2>/dev/null)" = "$dir (deleted)" ]
}
'
eval "$live"

# The server of this start that left the group before the tool could name it: a wrapper that runs
# `setsid -f SERVER`, or `exec setsid SERVER` (setsid forks when it leads the group), puts the
# server in a session of its own and is gone at once. Found through /proc: a live process that
# leads a session of its own outside this keeper's group, that this keeper may signal (one it
# could not would never be seen to end), that writes to the output pipe the keeper was started
# with (fd 9), and that has the run's folder and port among its arguments, or works in that
# folder under the title a server gives itself ("… 127.0.0.1:PORT", " [cluster]" or
# " [sentinel]" after it). Only such a process's command line is read: reading one can block on a
# process stuck in the kernel. Prints its pid; fails where there is none, or no /proc.
adrift() {
  [ -n "$port" ] && { read -r s <"/proc/$$/stat"; } 2>/dev/null || return 1
  set -- ${s##*") "}
  own=$3
  for p in /proc/[0-9]*; do
    n=${p#/proc/}
    { read -r s <"$p/stat"; } 2>/dev/null || continue
    # State, parent, group, session.
    set -- ${s##*") "}
    if [ "$1" = Z ] || [ "$4" != "$n" ] || [ "$3" = "$own" ]; then continue; fi
    if ! [ "$p/fd/1" -ef /proc/$$/fd/9 ] || ! kill -0 "$n" 2>/dev/null; then continue; fi
    # In the order a starting server goes through them (its arguments; then it moves into the
    # folder; then it takes its title), so that one it passes meanwhile is still found.
    if { grep -qzxF -e "$dir" "$p/cmdline" && grep -qzxF -e "$port" "$p/cmdline"; } ||
      { [ "$p/cwd" -ef "$dir" ] && grep -qzxE -e "[^ ]+ 127\.0\.0\.1:$port( \[[a-z]+\])?" "$p/cmdline"; }; then
      echo "$n"
      return 0
    fi
  done
  return 1
}

# The lifeline is read by a shell of its own, so that this one can wait on the server meanwhile. At
# the lifeline's end without a "keep" line first (the tool done or gone), or on USR1 (this keeper
# was sent SIGTERM), it stops the server (its whole group where it has one): SIGTERM, then SIGKILL
# if it still runs 5 s later. A TERM from this keeper (the server is gone) ends it at once. It waits
# on every child it starts, so that nothing of the keeper's outlives it.
lifeline='
started=$1
dir=$2
# The file in the folder that holds the pid of the real server, and beside it whether the started
# process is gone.
real=$3
grouped=$4
pid=${5:-$1}
running() {
  for one; do alive "$one" && return 0; done
  return 1
}
end() {
  kill -TERM "$@" 2>/dev/null
  # A server paused by SIGSTOP would take its TERM only once let go, after the 5 s.
  kill -CONT "$@" 2>/dev/null
  n=0
  while running "$@"; do
    if [ "$n" -ge 250 ]; then kill -KILL "$@" 2>/dev/null; break; fi
    sleep 0.02
    n=$((n + 1))
  done
}
stop() {
  { read -r found <"$dir/$real"; } 2>/dev/null && pid=${found:-$pid}
  # The started process and its group gone, their number free for any new process (a wrapper
  # that forked its server away and left): only the server, never that number again.
  if [ -e "$dir/$real.gone" ]; then
    if [ "$pid" != "$started" ] && { [ "$grouped" = 0 ] || ours "$pid"; }; then end "$pid"; fi
    exit 0
  fi
  # The started process by its pid as well: until it has left the keeper group, no group has its number.
  # A real server outside that group (a wrapper put it in a session of its own), reported by the
  # tool or found by the keeper (the file), goes too, while it is still this start: nothing
  # reserves a pid outside the group.
  if [ "$grouped" = 1 ]; then
    if [ "$pid" != "$started" ] && ours "$pid"; then end "$started" "-$started" "$pid"; else end "$started" "-$started"; fi
    exit 0
  fi
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
    # The real server under a wrapper: without a group of its own, or outside the started one, the
    # one to stop; either way (in the folder, for the keeper) the one to outlive, and the first watched.
    "pid "[1-9]*) pid=${line#pid }; echo "$pid" >"$dir/$real" ;;
  esac
done
stop
'
# A background job's stdin would be /dev/null: the lifeline goes to it through fd 4.
exec 4<&0 </dev/null
# Where the reader leaves the real server's pid when the tool reports one (a wrapper's child).
real=.emq-race-server-pid
sh -c "$live$lifeline" emq-race-lifeline "$pid" "$dir" "$real" "$grouped" <&4 >/dev/null 2>&1 9>&- &
reader=$!
exec 4<&-
# A SIGTERM sent here stops the server the same clean way (a kept server's reader is gone: not it).
trap 'kill -USR1 "$reader" 2>/dev/null' TERM
# A child's end wakes the wait below. The reader ends with exit 3 only after a "keep" line; any
# other end while the server lives (killed by hand, with any signal) leaves the lifeline unwatched,
# and the server would outlive the tool: it is stopped here the same way at once.
trap ':' CHLD

# The server's pid, in srv: the real server's under a wrapper once reported (the file), or the one
# this keeper found (adrift; held here too in case the file cannot be written), or else the one
# started here, until that is gone. Read without a fork: this runs every 50 ms while polling.
adopted=
gone=0
named() {
  s=
  { read -r s <"$dir/$real"; } 2>/dev/null
  srv=${s:-$adopted}
  if [ -z "$srv" ] && [ "$gone" = 0 ]; then srv=$pid; fi
}

# Whether the server runs: the process started here (outside its group for a moment after its
# start), the real server once named, or any process of its group that has not ended. Once the
# started process has been reaped and no process is left in its group, even a zombie, its number
# is free for any new process: it is gone, never looked at or signalled again, by this keeper or
# (the file beside the pid's) by the reader's stop.
running() {
  named
  if [ "$gone" = 0 ]; then
    alive "$pid" && return 0
    if ! kill -0 "$pid" 2>/dev/null && { [ "$grouped" = 0 ] || ! kill -0 "-$pid" 2>/dev/null; }; then
      gone=1
      : >"$dir/$real.gone"
      named
    fi
  fi
  # The real server first: one process's state, where its group is all of /proc to go through.
  [ -n "$srv" ] && alive "$srv" && return 0
  [ "$gone" = 0 ] && [ "$grouped" = 1 ] && alive "-$pid"
}

# The lifeline's own stop, run again on an input that ends at once: the same TERM, CONT, KILL.
stopAgain() {
  named
  sh -c "$live$lifeline" emq-race-lifeline "$pid" "$dir" "$real" "$grouped" "$srv" </dev/null >/dev/null 2>&1 9>&-
}

# A trapped signal ends a wait early: wait again while the server lives. What the started process
# leaves behind (a wrapper's server, its other children) is no child of this shell's to wait on:
# once it has ended, what still runs is watched by polling. Once nothing named runs, a server that
# left the group unnamed is looked for (adrift): found, it is the one watched from then on, and
# stopped if the lifeline has already ended the rest.
watched=1
kept=0
while :; do
  while running; do
    if [ "$gone" = 0 ] && kill -0 "$pid" 2>/dev/null; then wait "$pid"; else sleep 0.05; fi
    if [ "$watched" = 1 ] && ! kill -0 "$reader" 2>/dev/null; then
      watched=0
      wait "$reader"
      if [ $? -eq 3 ]; then kept=1; else stopAgain; fi
      # Kept, or stopped: no reader to pass a SIGTERM on to (its pid may be another process's by now).
      trap '' TERM
    fi
  done
  [ "$grouped" = 1 ] && adopted=$(adrift) || break
  # For the lifeline reader, whose stop reads it.
  echo "$adopted" >"$dir/$real"
  if [ "$watched" = 0 ] && [ "$kept" = 0 ]; then stopAgain; fi
done
rm -rf "$dir"
if [ "$watched" = 1 ]; then
  kill -TERM "$reader" 2>/dev/null
  wait "$reader"
fi
exit 0
