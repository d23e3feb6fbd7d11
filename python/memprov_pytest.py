"""memprov_pytest - pytest plugin: a memprov mark at the start and at the
end of every test, so that a trace of a pytest run can be judged test by
test (`memprov check` names the test that leaked).

Load it with ``memprov run --pytest -- python3 -m pytest ...`` (which puts
this file's directory on PYTHONPATH and names the plugin in PYTEST_PLUGINS)
or with ``-p memprov_pytest`` when this directory is on the path.

The marks are "test-start NODEID", before the test's setup, and "test-end
NODEID", after its teardown and a garbage collection (so that objects in
reference cycles the test left behind are not counted as kept). The
collection is of the young generations when nothing the test made can
have reached the oldest (no collection of the middle one ran during the
test) and no fixture older than the test was torn down (a module's
fixture lived through the collections after earlier tests, which moved
it to the oldest generation): a full one costs milliseconds once a big
library such as numpy is loaded, and made numpy's own suite 20 times
slower. Before the mark, the
failure pytest keeps for post-mortem debugging (sys.last_traceback and its
frames: what a failing or xfail test held) is let go, as pytest does at
the next test's call. A label
holds 255 bytes at most: a longer node id keeps its end, which names the
test. A fixture that outlives the test (class, module, package or
session scope) is set up between "fixture-start NAME" and "fixture-end
NAME", in the setup of the first test that asks for it: what it made
there is not that test's. The plugin calls memprov_mark from libmemprov.so, which memprov
preloads; in a process without memprov it does nothing at all (no garbage
collection either). It imports nothing of memprov's: the test process
needs no memprov package.
"""
import ctypes
import gc
import sys

import pytest

LABEL_MAX = 255  # bytes memprov keeps of a mark label

_mark = None
_old_fixture_ended = False


def _find_mark():
    """memprov_mark from the libmemprov.so in this process, or None."""
    try:
        fn = ctypes.CDLL(None).memprov_mark
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_char_p]
    fn.restype = None
    return fn


def label(prefix, nodeid):
    """prefix + nodeid as UTF-8, cut to LABEL_MAX bytes from the front of
    the node id (never inside a character)."""
    head = prefix.encode()
    tail = nodeid.encode("utf-8", "surrogateescape")
    room = LABEL_MAX - len(head)
    if len(tail) > room:
        tail = tail[len(tail) - room:]
        while tail and (tail[0] & 0xC0) == 0x80:
            tail = tail[1:]
    return head + tail


def pytest_configure(config):
    global _mark
    _mark = _find_mark()


def _old_gen():
    """What changes when objects move to the oldest generation."""
    return gc.get_stats()[2]["collections"], gc.get_count()[2]


def _drop_last_failure():
    """pytest keeps a failing test's exception in sys.last_* until the
    next test's call: its frames, with the test's locals."""
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            try:
                delattr(sys, name)
            except AttributeError:
                pass


def pytest_fixture_post_finalizer(fixturedef, request):
    """A class, module, package or session fixture torn down: what it made
    may have reached the oldest generation, and be garbage now."""
    global _old_fixture_ended
    if getattr(fixturedef, "scope", "function") != "function":
        _old_fixture_ended = True


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """Marks around the setup of a fixture that outlives the test (class,
    module, package or session scope): it is set up in the setup of the
    first test that asks for it, and what it made is not that test's."""
    outlives = _mark is not None and getattr(fixturedef, "scope", "function") != "function"
    if outlives:
        _mark(label("fixture-start ", fixturedef.argname))
    try:
        yield
    finally:
        if outlives:
            _mark(label("fixture-end ", fixturedef.argname))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _old_fixture_ended
    if _mark is None:
        yield
        return
    _mark(label("test-start ", item.nodeid))
    before = _old_gen()
    _old_fixture_ended = False
    yield
    _drop_last_failure()
    gc.collect(2 if _old_fixture_ended or _old_gen() != before else 1)
    _mark(label("test-end ", item.nodeid))
