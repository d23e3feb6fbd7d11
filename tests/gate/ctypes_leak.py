# ctypes_leak.py - a Python program with a native leak that survives
# interpreter finalization: 5000 bytes from libc's malloc through ctypes,
# never freed (LEAK-CTYPES). The CI gate must name this line even with
# its default Python suppressions on. With "clean", it frees the block.
# With "libc", malloc and free are looked up in libc's own handle
# (CDLL("libc.so.6"), dlsym on it) instead of the global scope; "clean"
# then also frees, through that handle, blocks libc itself allocated
# (getcwd's result).
import ctypes
import sys

libc = ctypes.CDLL("libc.so.6" if "libc" in sys.argv[1:] else None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.getcwd.restype = ctypes.c_void_p
kept = []


def cwd_and_free():
    for _ in range(10):
        libc.free(libc.getcwd(None, 0))


def leak():
    kept.append(libc.malloc(5000))  # LEAK-CTYPES


leak()
if "clean" in sys.argv[1:]:
    libc.free(kept.pop())
    cwd_and_free()
