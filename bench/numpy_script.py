"""numpy_script.py - numpy array churn benchmark for memprov (bench/run.sh).

    /usr/bin/python3 bench/numpy_script.py [STEPS]

Each step makes arrays of 1 KiB to 8 MiB (small ones from pymalloc or
malloc, big ones from mmap), computes on them, keeps the result in a
rolling window of 32 and drops the oldest: numpy's allocation pattern in a
training or simulation loop. Deterministic; prints only a checksum.
"""
import sys

import numpy as np


def step(rng, i):
    n = int(2 ** rng.uniform(7, 20))          # 128 .. 1M float64: 1 KiB .. 8 MiB
    a = rng.standard_normal(n)
    b = np.sqrt(np.abs(a)) * 2.0 + 1.0
    c = np.concatenate((a[: n // 2], b[n // 2 :]))
    m = np.outer(a[:64], b[:64])
    return (c[::3].copy(), float(c.sum() + m.trace()))


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    rng = np.random.default_rng(12345)
    window = []
    check = 0.0
    for i in range(steps):
        arr, s = step(rng, i)
        window.append(arr)
        if len(window) > 32:
            window.pop(0)
        check += s
    check += sum(float(w[:8].sum()) for w in window)
    print("%.6e" % check)


if __name__ == "__main__":
    main()
