# A clean unittest file (the README's CI recipe runs one like it): json,
# re and, when installed, numpy work in tests that keep nothing.
import json
import re
import unittest

try:
    import numpy as np
except ImportError:
    np = None


class TestWork(unittest.TestCase):
    def test_json(self):
        doc = json.dumps({"k%d" % i: list(range(i)) for i in range(200)})
        self.assertEqual(len(json.loads(doc)), 200)

    def test_re(self):
        words = re.findall(r"\w+", "the quick brown fox " * 500)
        self.assertEqual(len(words), 2000)

    @unittest.skipIf(np is None, "no numpy")
    def test_numpy(self):
        a = np.arange(1_000_000, dtype=np.float64)
        self.assertEqual(float(a.sum()), 499999500000.0)


if __name__ == "__main__":
    unittest.main()
