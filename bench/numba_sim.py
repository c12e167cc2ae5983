"""Numba's CUDA simulator on the 9x9 blur, the peer of kiln's cpu backend in bench/run.sh.

Prints the simulator's time per pixel in microseconds (the fastest of three runs) for a small
image; the simulator runs every thread as a Python thread, so a small image is plenty. Run with
NUMBA_ENABLE_CUDASIM=1 and Debian's python3-numba. Usage: numba_sim.py [side]
"""
import os
import sys
import time

import numpy as np
from numba import cuda

RADIUS = 4


@cuda.jit
def blur(src, dst):
    """Mean of the 9x9 window around each pixel, clamped at the edges (bench/kernels.lua's blur)."""
    x, y = cuda.grid(2)
    h, w = src.shape
    if x >= w or y >= h:
        return
    acc = 0.0
    for dy in range(-RADIUS, RADIUS + 1):
        for dx in range(-RADIUS, RADIUS + 1):
            yy = min(max(y + dy, 0), h - 1)
            xx = min(max(x + dx, 0), w - 1)
            acc += src[yy, xx]
    dst[y, x] = acc / ((2 * RADIUS + 1) * (2 * RADIUS + 1))


def main():
    if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        sys.exit("numba_sim.py: set NUMBA_ENABLE_CUDASIM=1 (this measures the simulator)")
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    src = np.random.default_rng(1).random((side, side), dtype=np.float32)
    dst = np.zeros_like(src)
    threads = (16, 16)
    blocks = ((side + 15) // 16, (side + 15) // 16)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        blur[blocks, threads](src, dst)
        best = min(best, time.perf_counter() - start)
    # The result must be right, or the timing means nothing: check one interior pixel.
    y = x = side // 2
    want = src[y - RADIUS:y + RADIUS + 1, x - RADIUS:x + RADIUS + 1].mean()
    if abs(dst[y, x] - want) > 1e-5:
        sys.exit(f"numba_sim.py: wrong blur ({dst[y, x]} != {want})")
    print(f"{best * 1e6 / (side * side):.6g}")


if __name__ == "__main__":
    main()
