# ctypes_leak.py - a Python program with a native leak that survives
# interpreter finalization: 5000 bytes from libc's malloc through ctypes,
# never freed (LEAK-CTYPES). The CI gate must name this line even with
# its default Python suppressions on. With "clean", it frees the block.
import ctypes
import sys

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
kept = []


def leak():
    kept.append(libc.malloc(5000))  # LEAK-CTYPES


leak()
if sys.argv[1:] == ["clean"]:
    libc.free(kept.pop())
