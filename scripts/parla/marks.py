"""
marks.py - memprov_mark() from Python, a no-op when memprov is not loaded.

libmemprov.so exports memprov_mark(const char *label); when the process
runs under memprov (LD_PRELOAD), dlopen(NULL) finds it. Without memprov
there is no such symbol and the call does nothing.
"""
import ctypes

_mark_fn = None
_looked_up = False


def _lookup():
    global _mark_fn, _looked_up
    _looked_up = True
    try:
        lib = ctypes.CDLL(None)
    except OSError:
        return
    fn = getattr(lib, "memprov_mark", None)
    if fn is None:
        return
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = None
    _mark_fn = fn


def memprov_mark(label):
    """Record a mark named label in memprov's trace; True when recorded."""
    if not _looked_up:
        _lookup()
    if _mark_fn is None:
        return False
    _mark_fn(label.encode() if isinstance(label, str) else label)
    return True


def memprov_present():
    """True when memprov_mark resolves in this process."""
    if not _looked_up:
        _lookup()
    return _mark_fn is not None
