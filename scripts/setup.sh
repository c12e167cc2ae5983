#!/usr/bin/env bash
# Installs the Debian packages kiln needs (only those missing, saying which) and builds build/kiln.
# Usage: scripts/setup.sh [--preset NAME]   (default preset: release)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config git
          liblua5.4-dev libboost-context-dev libstb-dev libcli11-dev libxxhash-dev
          libedit-dev libgtest-dev libgmock-dev libbenchmark-dev tmux gnuplot-nox
          clang libclang-rt-14-dev   # clang and its sanitizer runtimes: scripts/fuzz.sh
          python3-numpy              # tests/cli/npy_numpy.sh checks .npy files against NumPy
          libopenmpi-dev openmpi-bin   # kiln.mpi and mpirun (tests/mpi)
          xeus-dev                   # the Jupyter kernel (repl/jupyter.cpp): xeus and its ZeroMQ
          cppzmq-dev libzmq3-dev nlohmann-json3-dev xtl-dev libssl-dev uuid-dev  # server, spelled out
          python3-jupyter-client python3-jupyter-kernel-test  # tests/cli/jupyter_kernel.sh
          jupyter-nbconvert python3-nbclient)                  # tests/cli/jupyter_notebook.sh

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "kiln setup: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

preset="${KILN_PRESET:-release}"
cmake --preset "$preset" >&2
cmake --build --preset "$preset" >&2
