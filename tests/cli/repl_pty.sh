#!/usr/bin/env bash
# Drives the real REPL through a pseudo-terminal (tmux): printed values, multi-line input with
# the continuation prompt, Tab completion, Ctrl-C during a chunk and at the prompt, Ctrl-D, and
# the history file. Usage: bash repl_pty.sh /path/to/kiln
set -euo pipefail
KILN=$(realpath "$1")
WORK=$(mktemp -d)
trap 'tmux -S "$WORK/tmux.sock" kill-server 2>/dev/null || true; rm -rf "$WORK"' EXIT
source "$(dirname "$0")/lib/pty.sh"

start_kiln
type_keys '1+1' Enter
wait_for '^2$'

type_keys 'x = 5' Enter
type_keys 'x' Enter
wait_for '^5$'

type_keys 'for i = 1, 3 do' Enter
wait_for '^  \.\.\.$'
type_keys 'print(i * 10)' Enter
type_keys 'end' Enter
wait_for_block $'  ... end\n10\n20\n30\nkiln>'

# Completion of a table field: the completed text lands in the line that then runs.
type_keys 'string.fo' Tab
wait_for '^kiln> string\.format$'
type_more '("%d!", 7)' Enter
wait_for '^"7!"$'

# Completion of a method through the value's metatable (__index), as a:me<TAB> for arrays.
type_keys 's = "abc"' Enter
type_keys 's:upp' Tab
wait_for '^kiln> s:upper$'
type_more '()' Enter
wait_for '^"ABC"$'

# The same for kiln's own values: an array's methods and the cuda module's functions.
type_keys 'a = array.arange(4, "int32")' Enter
type_keys 'a:me' Tab
wait_for '^kiln> a:mean$'
type_more '()' Enter
wait_for '^1\.5$'
type_keys 'cuda.to_d' Tab
wait_for '^kiln> cuda\.to_device$'
type_more '(a):copy_to_host()' Enter
wait_for '^array\(\[0, 1, 2, 3\], dtype=int32\)$'

# Ctrl-C interrupts a running chunk; the REPL and its state survive.
type_keys 'y = 41' Enter
type_keys 'while true do end' Enter
# The chunk may not have started when the first Ctrl-C arrives: press it until it lands.
deadline=$((SECONDS + 10))
until pane | grep -q 'interrupted!'; do
  ((SECONDS < deadline)) || fail "Ctrl-C did not interrupt the loop"
  sleep 0.3
  tm send-keys -t kiln C-c
done
type_keys 'y + 1' Enter
wait_for '^42$'

# Ctrl-C at the prompt throws the typed line away.
type_keys 'abc'
wait_for '^kiln> abc$'
tm send-keys -t kiln C-c
wait_for '^kiln> abc\^C$'
type_keys '6 * 7 + 1' Enter
wait_for '^43$'
pane | grep -q 'abc6' && fail "Ctrl-C did not clear the line"

# An error is reported and the REPL goes on.
type_keys 'error("boom")' Enter
wait_for 'stdin:1: boom'

# Ctrl-D at an empty prompt exits with status 0 (libedit echoes it as ^D).
pid=$(kiln_pid)
wait_prompt
tm send-keys -t kiln C-d
wait_for '^kiln> \^D$'
status=$(wait_exit_status "$pid")
[[ $status == 0 ]] || fail "exit status $status, not 0"

# The history file holds the lines typed (libedit encodes blanks as \040).
history="$WORK/home/.kiln_history"
[[ -f $history ]] || fail "no history file at $history"
grep -Fxq '1+1' "$history" || fail "1+1 missing from history"
grep -Fq 'while\040true' "$history" || fail "the loop missing from history"

# A new session recalls the history with the Up arrow.
start_kiln
tm send-keys -t kiln Up
wait_for '^kiln> error\("boom"\)$'
tm send-keys -t kiln Up
wait_for '^kiln> 6 \* 7 \+ 1$'
tm send-keys -t kiln Enter
wait_for '^43$'
echo "repl_pty: ok"
