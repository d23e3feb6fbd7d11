# A worker thread allocates with the GIL released: libc malloc through
# ctypes.CDLL (which drops the GIL around the call), after numpy work on
# the same thread when numpy is there. The 1,234,567-byte block is kept.
import ctypes
import threading

try:
    import numpy as np
except ImportError:
    np = None

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
keep = []


def grab():
    keep.append(libc.malloc(1_234_567))  # GRAB


def work():
    if np is not None:
        a = np.arange(300_000, dtype=np.float64)[::-1].copy()
        np.sort(a, kind="stable")
    grab()  # WORK


t = threading.Thread(target=work)
t.start()
t.join()
print(len(keep))
