# objects.py [thread]: small Python objects kept and dropped, with lines
# tests can find by their tags. keep() makes 10000 bytes objects of 100
# bytes (133-byte pymalloc blocks; the size is a variable, or the compiler
# would fold the product into one constant) and keeps them; churn() makes
# as many and drops them. With "thread", four threads keep 2500 each.
import sys
import threading

kept = []


def keep(n, size=100):
    for i in range(n):
        kept.append(b"x" * size)  # KEEP


def churn(n, size=100):
    tmp = [b"y" * size for i in range(n)]  # CHURN
    del tmp


if len(sys.argv) > 1 and sys.argv[1] == "thread":
    ts = [threading.Thread(target=keep, args=(2500,)) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
else:
    keep(10000)
churn(10000)
print(len(kept))
