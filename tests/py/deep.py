# A buffer kept from 300 frames deep: a stack record holds the innermost
# 128 Python frames (MP_MAX_PYFRAMES), all of rec() here.
import sys

sys.setrecursionlimit(2000)
keep = []


def rec(n):
    if n == 0:
        keep.append(bytearray(1_600_000))  # BOTTOM
        return
    rec(n - 1)  # RECURSE


rec(300)
print(len(keep))
