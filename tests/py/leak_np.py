# Keeps 5 of 10 numpy arrays of 1,000,000 float64 (8,000,000 bytes each),
# all made at the np.empty line in make(). "thread": done in a worker thread.
import sys
import threading

import numpy as np

keep = []


def make():
    a = np.empty(1_000_000)
    a.fill(1.0)
    return a


def work():
    for i in range(10):
        a = make()
        if i % 2 == 0:
            keep.append(a)


if sys.argv[1:] == ["thread"]:
    t = threading.Thread(target=work)
    t.start()
    t.join()
else:
    work()
print(len(keep))
