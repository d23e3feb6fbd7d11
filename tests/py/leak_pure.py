# Keeps 5 of 10 bytearray(8_000_000) (8,000,001 bytes each: CPython adds a
# NUL), all made at the bytearray line in make(). "thread": in a worker.
import sys
import threading

keep = []


def make():
    return bytearray(8_000_000)


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
