#!/usr/bin/env bash
# The kiln program from outside: scripts and their arguments, -e, -, stdin, exit codes and
# tracebacks, --version/--help/--info/--cache-*, and the REPL over a pipe (values, :time,
# :load, :reset, :edit). Usage: bash command_line.sh /path/to/kiln
set -uo pipefail
KILN=$(realpath "$1")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
export HOME="$WORK" KILN_HISTORY="$WORK/history"
failures=0

# check NAME EXPECTED ACTUAL: compares two strings.
check() {
  if [[ $2 != "$3" ]]; then
    echo "FAIL $1"$'\n'"  expected: $(printf %q "$2")"$'\n'"  actual:   $(printf %q "$3")"
    failures=$((failures + 1))
  fi
}
# contains NAME NEEDLE HAYSTACK
contains() {
  if [[ $3 != *"$2"* ]]; then
    echo "FAIL $1: no $(printf %q "$2") in"$'\n'"$3"
    failures=$((failures + 1))
  fi
}

# Scripts get arg and ... as lua.c gives them.
cat > args.lua <<'LUA'
print(arg[-1] ~= nil, arg[0], #arg, ...)
print(select("#", ...))
LUA
check "script args" $'true\targs.lua\t3\ta\tb c\t--x\n3' "$("$KILN" args.lua a 'b c' --x)"
check "options stop at the script" $'true\targs.lua\t1\t-e\n1' "$("$KILN" args.lua -e)"
check "-- ends options" $'true\targs.lua\t1\t-v\n1' "$("$KILN" -- args.lua -v)"
check "arg with -e" "$KILN" "$("$KILN" -e 'print(arg[0])')"

# -e chunks run in order, before the script; -l requires.
check "-e order" $'1\n2\n2' "$("$KILN" -e 'x = 1 print(x)' -e'x = x + 1 print(x)' -e 'print(x)')"
check "-l" "table" "$("$KILN" -l string -e 'print(type(string))')"

# Standard input: "-" and a non-terminal stdin run it as a script.
check "kiln -" $'from stdin\tp\tq' "$(echo 'print("from stdin", ...)' | "$KILN" - p q)"
check "stdin script" "42" "$(echo 'print(6 * 7)' | "$KILN")"

# The preloaded modules.
check "modules" $'true\ttrue\ttable\ttable' \
  "$("$KILN" -e 'print(require("kiln.cuda") == cuda, require("kiln.array") == array, type(cuda), type(array))')"
check "standard libraries" $'3\thello\t2' \
  "$("$KILN" -e 'print(math.floor(3.7), string.lower("HELLO"), #table.pack(1, 2))')"

# Failing scripts: traceback with file:line on stderr, exit status 1.
printf 'local x = 1\nlocal function f()\n  error("broken " .. x)\nend\nf()\n' > bad.lua
err=$("$KILN" bad.lua 2>&1 >/dev/null); status=$?
check "error status" 1 "$status"
contains "error message" "kiln: bad.lua:3: broken 1" "$err"
contains "traceback" "stack traceback:" "$err"
contains "traceback line" "bad.lua:5: in main chunk" "$err"
"$KILN" -e 'error("e")' 2>/dev/null; check "-e error status" 1 "$?"
printf 'x = = 1\n' > syntax.lua
contains "syntax error" "syntax.lua:1:" "$("$KILN" syntax.lua 2>&1)"
"$KILN" missing.lua 2>/dev/null; check "missing script status" 1 "$?"
"$KILN" -e 'os.exit(3)'; check "os.exit status" 3 "$?"
check "success status" 0 "$("$KILN" -e 'x = 1' >/dev/null; echo $?)"

# Options.
check "--version" "kiln 0.1.0 (Lua 5.4" "$("$KILN" --version | cut -c1-19)"
contains "--help" "usage: kiln [options] [script [args...]]" "$("$KILN" --help)"
out=$("$KILN" --frobnicate 2>&1); status=$?
check "bad option status" 1 "$status"
contains "bad option message" "unrecognized option '--frobnicate'" "$out"
contains "-e without code" "'-e' needs an argument" "$("$KILN" -e 2>&1)"
contains "bad backend" "unknown backend 'gpu'" "$("$KILN" --backend gpu 2>&1)"
check "--backend cpu picks cpu" "cpu" "$(KILN_BACKEND=cuda "$KILN" --backend cpu -e 'print(cuda.backend())')"
# --check: an off-by-one write is an error naming the element.
cat > offbyone.lua <<'LUA'
local k = cuda.jit([[__global__ void offbyone(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.0f;
}]])
local d = cuda.device_array(100, "float32")
k[{1, 128}](d, 100)
print("no error")
LUA
contains "--check catches off-by-one" "element 100 of a device array of 100" \
  "$(env -u KILN_CHECK KILN_BACKEND=cpu "$KILN" --check offbyone.lua 2>&1)"
info=$("$KILN" --info); status=$?
check "--info status" 0 "$status"
contains "--info version" "kiln: 0.1.0" "$info"
check "--info names kiln once" 1 "$(grep -c '^kiln: ' <<<"$info")"
contains "--info lua" "lua: Lua 5.4" "$info"
contains "--info backend" "backend: " "$info"
# --cache-stats: the cuda module's numbers when it has them, else a clear error.
if "$KILN" -e 'os.exit(cuda.cache_stats and 0 or 1)'; then
  contains "--cache-stats" "dir: " "$("$KILN" --cache-stats)"
  check "--cache-clear status" 0 "$("$KILN" --cache-clear >/dev/null; echo $?)"
else
  out=$("$KILN" --cache-stats 2>&1); status=$?
  check "--cache-stats unavailable status" 1 "$status"
  contains "--cache-stats unavailable" "cache is unavailable" "$out"
fi

# The REPL over a pipe (-i): values printed as the REPL prints them.
repl() { printf '%s\n' "$@" | "$KILN" -i 2>&1 | sed 1d; }
check "repl values" \
  $'kiln> 2\nkiln> kiln> 5\nkiln> "s\\n"\t1\tnil\nkiln> ' \
  "$(repl '1+1' 'x = 5' 'x' '"s\n", 1, nil')"
check "repl tables" \
  $'kiln> {1, 2, {a = 1, b = "x"}, f = false, ["k y"] = 3}\nkiln> ' \
  "$(repl 't = {1, 2, {a = 1, b = "x"}, ["k y"] = 3, f = false} return t')"
check "repl multi-line" $'kiln>   ...   ... 1\n2\nkiln> ' "$(repl 'for i = 1, 2 do' 'print(i)' 'end')"
contains "repl error goes on" $'stdin:1: oops' "$(repl 'error("oops")' '7')"
contains "repl after error" $'\nkiln> 7' "$(repl 'error("oops")' '7')"
contains "repl :help" ":time EXPR" "$(repl ':help')"
contains "repl unknown command" "unknown command :nope" "$(repl ':nope')"
check "repl :quit" $'kiln> ' "$(repl ':quit' 'print("after quit")')"
check "repl -i after script" $'kiln> "set by script"\nkiln> ' \
  "$(printf 'v\n' | "$KILN" -i -e 'v = "set by script"' | sed 1d)"

# :time prints min/median/max per loop.
timing=$(repl ':time math.sqrt(2)')
[[ $timing =~ min\ [0-9.]+\ (ns|µs|ms|s),\ median\ [0-9.]+\ (ns|µs|ms|s),\ max\ [0-9.]+\ (ns|µs|ms|s)\ per\ loop\ \([1-7]\ runs?,\ [0-9]+\ loops?\ each\) ]] ||
  { echo "FAIL :time output: $timing"; failures=$((failures + 1)); }
contains ":time error" "(time):1: t" "$(repl ':time error("t")')"
# A first launch that compiles is run once untimed, and :time says so.
timed=$(KILN_CACHE_DIR="$PWD/time-cache" repl 'k = cuda.jit("__global__ void timed(int* x) { x[0] = 1; }")' \
  'd = cuda.device_array(1, "int32")' ':time k[{1, 1}](d)')
contains ":time first run" "first run " "$timed"
contains ":time first run not timed" "not timed (a first launch compiles or loads its kernel)" "$timed"
[[ $timed =~ per\ loop ]] || { echo "FAIL :time after a compile: $timed"; failures=$((failures + 1)); }
contains ":time syntax error" "(time):1: unexpected symbol" "$(repl ':time (')"

# :load runs a file in the session; :reset forgets it.
printf 'loaded = (loaded or 0) + 1\nreturn "ok"\n' > lib.lua
check ":load" $'kiln> "ok"\nkiln> "ok"\nkiln> 2\nkiln> ' "$(repl ':load lib.lua' ':load "lib.lua"' 'loaded')"
check ":reset" $'kiln> 1\nkiln> fresh Lua state\nkiln> nil\nkiln> "table"\nkiln> ' \
  "$(repl 'y = 1 return y' ':reset' 'y' 'type(cuda)')"

# :edit starts $EDITOR with an argv vector (no shell) and runs a .lua file again.
cat > editor.sh <<'SH'
#!/usr/bin/env bash
# A fake editor: records its argv, then "edits" the file.
printf '%s\n' "$@" > "$(dirname "$0")/editor-argv"
printf 'print("edited version")\n' > "${@: -1}"
SH
chmod +x editor.sh
printf 'print("first version")\n' > script.lua
out=$(EDITOR="$WORK/editor.sh --wait -n" repl ':edit script.lua')
contains ":edit reruns" "edited version" "$out"
check ":edit argv" $'--wait\n-n\nscript.lua' "$(cat editor-argv)"
out=$(EDITOR="$WORK/no-such-editor" repl ':edit script.lua')
contains ":edit missing editor" "cannot start" "$out"
contains ":edit unknown name" "no file or kernel named" "$(EDITOR=true repl ':edit nokernel')"
# :edit of a lab kernel edits a copy in the current folder; kiln's own file stays as shipped.
shipped=$(sha256sum "$KILN_HOME/kernels_src/blur.cu" | cut -d' ' -f1)
cat > append.sh <<'SH'
#!/usr/bin/env bash
printf '// my edit\n' >> "${@: -1}"
SH
chmod +x append.sh
out=$(EDITOR="$WORK/append.sh" repl ':edit blur')
contains ":edit copies a lab kernel" "copied kiln's" "$out"
contains ":edit edited the copy" "// my edit" "$(cat blur.cu)"
check ":edit leaves kiln's kernel alone" "$shipped" "$(sha256sum "$KILN_HOME/kernels_src/blur.cu" | cut -d' ' -f1)"
out=$(EDITOR="$WORK/append.sh" repl ':edit blur')
check ":edit reuses the copy" 2 "$(grep -c '// my edit' blur.cu)"
# :reset with an argument is refused rather than wiping the session.
contains ":reset extra" "takes no argument" "$(repl 'z = 3' ':reset z' 'z')"
contains ":reset extra keeps the session" "kiln> 3" "$(repl 'z = 3' ':reset z' 'z')"

if ((failures)); then
  echo "$failures failures"
  exit 1
fi
echo "command_line: ok"
