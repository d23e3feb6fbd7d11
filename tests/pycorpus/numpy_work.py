# A clean numpy program: arrays made, reduced and dropped in a loop. It
# keeps nothing: every report must name none of its lines.
import numpy as np


def step(rng, n):
    a = rng.standard_normal((n, 64))
    b = a @ a.T
    return float(np.trace(b)) / n


def main():
    rng = np.random.default_rng(0)
    acc = 0.0
    for i in range(16):
        acc += step(rng, 400)
    print("numpy_work: %.1f" % acc)


if __name__ == "__main__":
    main()
