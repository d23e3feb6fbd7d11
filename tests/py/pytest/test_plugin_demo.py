# test_plugin_demo.py: tests for t4070 (the memprov_pytest plugin). Three
# tests, one with a node id far longer than a mark label holds.
import pytest

kept = []


def test_keeps():
    kept.append(bytearray(1_000_000))


def test_clean():
    assert len(bytearray(1000)) == 1000


LONG = "é" * 150 + "-end"


@pytest.mark.parametrize("word", [LONG])
def test_long(word):
    assert word.endswith("-end")
