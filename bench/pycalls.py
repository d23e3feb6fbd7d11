"""pycalls.py - call-heavy pure-Python benchmark for memprov (bench/run.sh).

    /usr/bin/python3 bench/pycalls.py [ROUNDS]

Deep recursion through several functions, method calls, small tuples,
lists, dicts and strings: the interpreter's own allocator (pymalloc) and
the Python frame tracking of a tracer are exercised on every call, with
few calls into malloc. Deterministic; prints only a checksum.
"""
import sys


class Node:
    __slots__ = ("key", "left", "right")

    def __init__(self, key, left=None, right=None):
        self.key = key
        self.left = left
        self.right = right

    def weight(self):
        w = self.key & 0xFF
        if self.left is not None:
            w += self.left.weight()
        if self.right is not None:
            w += self.right.weight()
        return w


def build(depth, key):
    if depth == 0:
        return Node(key)
    return Node(key, build(depth - 1, key * 2 + 1), build(depth - 1, key * 2 + 2))


def words(n, salt):
    return ["w%d_%d" % (i % 97, salt) for i in range(n)]


def count(ws):
    d = {}
    for w in ws:
        d[w] = d.get(w, 0) + 1
    return d


def chain_a(n, acc):
    return acc if n == 0 else chain_b(n - 1, acc + (n, n * 3)[n & 1])


def chain_b(n, acc):
    return acc if n == 0 else chain_c(n - 1, acc ^ n)


def chain_c(n, acc):
    return acc if n == 0 else chain_a(n - 1, (acc * 31 + n) & 0xFFFFFFFF)


def one_round(r):
    total = build(10, r).weight()
    total += len(count(words(2000, r % 13)))
    for i in range(40):
        total += chain_a(60 + i, r)
    kept = [(i, str(i), [i] * 3) for i in range(500)]
    total += sum(t[0] + len(t[1]) + len(t[2]) for t in kept)
    return total & 0xFFFFFFFF


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    check = 0
    for r in range(rounds):
        check = (check * 31 + one_round(r)) & 0xFFFFFFFFFFFF
    print("%012x" % check)


if __name__ == "__main__":
    main()
