#!/usr/bin/env bash
# Builds kiln's libFuzzer targets (tests/fuzz/*.cpp) with Debian's clang++ and AddressSanitizer +
# UndefinedBehaviorSanitizer into build-fuzz/, then runs each for FUZZ_SECONDS (default 30)
# over its corpus in tests/fuzz/corpus/<target>/. New inputs go to build-fuzz/corpus/<target>/
# (copy interesting ones into the committed corpus by hand); a crash leaves its input in
# build-fuzz/ and makes this script fail.
# Usage: scripts/fuzz.sh [target...]   (targets: kernel_decl regions rewrites cache_entry array_from npy)
# CI (.ci/run) runs every target for FUZZ_SECONDS=15.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT="$ROOT/build-fuzz"
SECONDS_EACH=${FUZZ_SECONDS:-30}
CXX=${FUZZ_CXX:-clang++}
command -v "$CXX" > /dev/null ||
  { echo "fuzz.sh: no $CXX; scripts/setup.sh installs clang and libclang-rt-14-dev" >&2; exit 1; }
mkdir -p "$OUT"
# kiln's version, as CMake defines it: the committed cache entries carry it.
VERSION=$(sed -n 's/^project(kiln VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
FLAGS=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -I"$ROOT" -I"$ROOT/kernels_src" -I/usr/include/lua5.4 -DKILN_VERSION=\"$VERSION\")

# Compiles one target from its sources, only when a source is newer than the binary.
build() {
  local name=$1; shift
  local bin="$OUT/fuzz_$name" newer=0
  for s in "$@" "$0"; do [ "$s" -nt "$bin" ] && newer=1; done
  ((newer)) || return 0
  echo "fuzz.sh: building $name"
  "$CXX" "${FLAGS[@]}" "$@" -o "$bin" "${LIBS[@]}"
}
cd "$ROOT"
LIBS=()
build kernel_decl tests/fuzz/fuzz_kernel_decl.cpp jit/kernel_decl.cpp jit/lexer.cpp
build regions tests/fuzz/fuzz_regions.cpp jit/cpu/regions.cpp jit/cpu/region_words.cpp \
  jit/cpu/inline_sync.cpp jit/cpu/signed_indices.cpp jit/cpu/wide_subscripts.cpp \
  jit/cpu/block_groups.cpp jit/cpu/conditionals.cpp jit/cpu/plan.cpp jit/cpu/barrier_macros.cpp \
  jit/cpu/gpu_casts.cpp jit/cpu/inline_ptx.cpp \
  jit/kernel_decl.cpp \
  jit/lexer.cpp jit/source.cpp
build rewrites tests/fuzz/fuzz_rewrites.cpp jit/cpu/plan.cpp jit/cpu/regions.cpp \
  jit/cpu/region_words.cpp jit/cpu/inline_sync.cpp jit/cpu/block_groups.cpp jit/kernel_decl.cpp \
  jit/cpu/lockstep_stores.cpp jit/cpu/block_barriers.cpp jit/cpu/template_args.cpp \
  jit/cpu/header_votes.cpp jit/lexer.cpp jit/source.cpp
LIBS=(-lxxhash)
build cache_entry tests/fuzz/fuzz_cache_entry.cpp jit/cache.cpp
LIBS=(-llua5.4)
build array_from tests/fuzz/fuzz_array_from.cpp repl/lua_array.cpp runtime/host_array.cpp \
  runtime/dtype.cpp runtime/image.cpp runtime/array_format.cpp runtime/random.cpp runtime/npy.cpp \
  runtime/array_math.cpp
LIBS=()
build npy tests/fuzz/fuzz_npy.cpp runtime/npy.cpp runtime/host_array.cpp runtime/dtype.cpp

targets=("$@")
((${#targets[@]})) || targets=(kernel_decl regions rewrites cache_entry array_from npy)
for t in "${targets[@]}"; do
  mkdir -p "$OUT/corpus/$t"
  echo "fuzz.sh: running $t for $SECONDS_EACH s"
  seeds=("$ROOT/tests/fuzz/corpus/$t")
  [ "$t" = regions ] || [ "$t" = rewrites ] && seeds+=("$ROOT/kernels_src")  # the lab kernels seed the rewrite's corpus
  (cd "$OUT" && "./fuzz_$t" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 \
     -max_len=65536 -print_final_stats=1 "corpus/$t" "${seeds[@]}") \
    > "$OUT/$t.log" 2>&1 || { echo "fuzz.sh: $t FAILED (see $OUT/$t.log)"; tail -40 "$OUT/$t.log"; exit 1; }
  grep -E "^Done|stat::number_of_executed_units" "$OUT/$t.log" | head -2
done
echo "fuzz.sh: ok"
