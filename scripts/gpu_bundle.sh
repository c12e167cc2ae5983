#!/usr/bin/env bash
# Prepares a GPU check on a machine that cannot install packages (the device machines lent to
# kiln's sessions start bare, with the CUDA toolkit, CMake and a C++ compiler but no Lua, Boost or
# libedit): builds build/ here and copies the shared libraries kiln's binaries need beyond the
# C and C++ runtimes into .gpu/lib, and build/ without its objects, archives and test cache into
# .gpu/build (both git-ignored; together well under the 64 MiB a device machine is sent). Then, on
# that machine, with .gpu carried beside the source tree, one command runs the whole check:
#   mkdir -p <this folder's parent>; ln -sfn "$PWD" <this folder>; rm -rf build; cp -a .gpu/build build
#   export LD_LIBRARY_PATH=$PWD/.gpu/lib; scripts/gpu_check.sh --no-build
# (the link because build/ names this checkout's absolute paths). See docs/cuda-backend.md.
# Usage: scripts/gpu_bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
cmake --build --preset release --target kiln kiln_unit_tests kiln_bench_micro kiln_proc_timer \
  kiln_cuda_floor >/dev/null
rm -rf .gpu/lib .gpu/build  # (anything else kept there, a lease's own script, stays)
mkdir -p .gpu/lib
binaries=(build/kiln build/tests/kiln_unit_tests build/bench/kiln_bench_micro build/bench/kiln_proc_timer
  build/bench/kiln_cuda_floor)
# The Jupyter kernel's plugin (built with kiln when xeus is there) needs xeus and ZeroMQ.
[[ -f build/libkiln_jupyter.so ]] && binaries+=(build/libkiln_jupyter.so)
# kiln.mpi's plugin needs libmpi and the libraries under it.
[[ -f build/libkiln_mpi.so ]] && binaries+=(build/libkiln_mpi.so)
# Every library ldd resolves, except the C and C++ runtimes (the other machine has its own,
# as new or newer: it must not get these).
ldd "${binaries[@]}" | awk '/=>/ && $3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libstdc++.so.* | libgcc_s.so.* | ld-linux* | libpthread.so.* | libdl.so.* | librt.so.*) ;;
    *) cp -L "$lib" .gpu/lib/ ;;
  esac
done
# What ctest and the benchmarks run, without what only a rebuild needs.
mkdir -p .gpu/build
tar -C build --exclude='*.o' --exclude='*.a' --exclude=test-cache -cf - . | tar -C .gpu/build -xf -
echo "gpu_bundle: $(ls .gpu/lib | wc -l) libraries in .gpu/lib; .gpu is $(du -sh .gpu | cut -f1)"
echo "gpu_bundle: on the GPU machine, carry .gpu, then run:"
echo "  mkdir -p $(dirname "$PWD"); ln -sfn \"\$PWD\" $PWD; rm -rf build; cp -a .gpu/build build"
echo '  export LD_LIBRARY_PATH=$PWD/.gpu/lib; scripts/gpu_check.sh --no-build'
