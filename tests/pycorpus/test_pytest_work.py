# A clean pytest file: json and re work in tests that keep nothing.
import json
import re


def test_json():
    doc = json.dumps({"k%d" % i: list(range(i)) for i in range(200)})
    assert len(json.loads(doc)) == 200


def test_re():
    assert len(re.findall(r"\w+", "the quick brown fox " * 500)) == 2000


def test_strings():
    parts = ["x%d" % i for i in range(10000)]
    assert len(",".join(parts)) > 10000
