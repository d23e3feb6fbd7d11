# The twin of test_pytest_work.py with a leak: one test keeps 8 MB in a
# module global (LEAK: the buffer is made at that line).
import json

KEPT = []


def test_json():
    doc = json.dumps({"k%d" % i: list(range(i)) for i in range(200)})
    assert len(json.loads(doc)) == 200


def test_keeps():
    KEPT.append(bytearray(8_000_000))  # LEAK
    assert len(KEPT) == 1


def test_strings():
    parts = ["x%d" % i for i in range(10000)]
    assert len(",".join(parts)) > 10000
