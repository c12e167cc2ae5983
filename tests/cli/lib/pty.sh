# Helpers for the terminal tests (repl_pty.sh, repl_interrupt.sh): kiln runs in a tmux pane, a
# real pseudo-terminal; keys go in with send-keys, the screen comes back with capture-pane.
# Source it after setting KILN (the binary) and WORK (a private folder, removed by the caller).
SOCKET="$WORK/tmux.sock"
mkdir -p "$WORK/home"

tm() { tmux -S "$SOCKET" "$@"; }
pane() { tm capture-pane -p -t kiln; }
fail() {
  echo "FAIL: $*" >&2
  echo "--- pane ---" >&2
  pane >&2 || true
  exit 1
}
# Waits (polling, 10 s deadline) until the pane matches the extended regex $1 on some line.
wait_for() {
  local deadline=$((SECONDS + 10))
  until pane | grep -Eq -- "$1"; do
    ((SECONDS < deadline)) || fail "no line matching /$1/"
    sleep 0.05
  done
}
# Waits until the consecutive lines in $1 (a fixed string) appear in the pane.
wait_for_block() {
  local deadline=$((SECONDS + 10))
  until pane | tr '\n' '\r' | grep -Fq -- "$(printf '%s' "$1" | tr '\n' '\r')"; do
    ((SECONDS < deadline)) || fail "no block: $1"
    sleep 0.05
  done
}
# Waits until the last non-blank line of the pane is an empty prompt ("kiln>" or "  ..."):
# keys typed ahead of the prompt are echoed by the terminal driver and garble the display.
wait_prompt() {
  local deadline=$((SECONDS + 10))
  until pane | grep -v '^$' | tail -n 1 | grep -Eq '^(kiln>|  \.\.\.)$'; do
    ((SECONDS < deadline)) || fail "no prompt"
    sleep 0.02
  done
}
# At the next prompt, types text literally, then optionally presses keys (Enter, Tab, ...).
type_keys() {
  wait_prompt
  type_more "$@"
}
# Types more of the current line (no wait), then optionally presses keys.
type_more() {
  tm send-keys -t kiln -l -- "$1"
  shift
  if (($#)); then tm send-keys -t kiln "$@"; fi
}
# Starts kiln in a fresh tmux server with a private HOME; extra arguments are environment
# settings (NAME=value) for it.
start_kiln() {
  tm kill-server 2>/dev/null || true
  tm -f /dev/null new-session -d -s kiln -x 200 -y 50 \
    "env -u KILN_HISTORY HOME=$WORK/home TERM=xterm $* $KILN"
  tm set-option -t kiln remain-on-exit on >/dev/null
  wait_for '^kiln>$'  # capture-pane drops trailing blanks
}

# The process id of kiln in the pane (env execs it).
kiln_pid() { tm display-message -p -t kiln '#{pane_pid}'; }
# Prints the ids of the processes whose parent is $1 (from /proc: no procps needed).
children_of() {
  local stat line fields
  for stat in /proc/[0-9]*/stat; do
    read -r line < "$stat" 2> /dev/null || continue
    read -ra fields <<< "${line##*) }"  # fields from the 3rd (state) on; the 4th is the parent
    [[ ${fields[1]} == "$1" ]] && echo "${stat//[^0-9]/}"
  done
  return 0
}
# Waits (20 s deadline) until kiln, process $1, has exited and prints its exit status. tmux's
# #{pane_dead_status} alone is not enough: tmux links libutempter, whose record removal at the
# pane's end briefly replaces tmux's SIGCHLD handler; a kiln that exits in that window is never
# reaped, #{pane_dead} is 1 and #{pane_dead_status} stays empty (about 1 run in 4 on a loaded
# machine). Such a zombie still shows its status in /proc/PID/stat (field 52, as waitpid gives it).
wait_exit_status() {
  local pid=$1 deadline=$((SECONDS + 20)) status stat fields
  for (( ; ; )); do
    status=$(tm display-message -p -t kiln '#{pane_dead_status}')
    if [[ -n $status ]]; then
      echo "$status"
      return
    fi
    if stat=$(cat "/proc/$pid/stat" 2> /dev/null); then
      read -ra fields <<< "${stat##*) }"  # fields from the 3rd (state) on
      if [[ ${fields[0]} == Z ]]; then
        echo $((fields[49] >> 8))
        return
      fi
    fi
    ((SECONDS < deadline)) || fail "kiln (pid $pid) did not exit"
    sleep 0.05
  done
}
