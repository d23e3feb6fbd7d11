# The twin of numpy_work.py with a leak: every step's product is kept in
# a module-global list (LEAK: the arrays are made at that line).
import numpy as np

history = []


def step(rng, n):
    a = rng.standard_normal((n, 64))
    b = a @ a.T  # LEAK
    history.append(b)
    return float(np.trace(b)) / n


def main():
    rng = np.random.default_rng(0)
    acc = 0.0
    for i in range(16):
        acc += step(rng, 400)
    print("leak_numpy: %.1f" % acc)


if __name__ == "__main__":
    main()
