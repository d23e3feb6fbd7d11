# A stand-in for memprov's pytest plugin, for the tests only: a mark
# "test-start NODEID" before each test's call and "test-end NODEID" after
# it, through memprov_mark (present only under memprov). Load it with
# `-p memprov_marks_standin` and this directory on PYTHONPATH.
import ctypes

import pytest

_lib = ctypes.CDLL(None)
_mark = getattr(_lib, "memprov_mark", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    if _mark:
        _mark(("test-start " + item.nodeid).encode())
    yield
    if _mark:
        _mark(("test-end " + item.nodeid).encode())
