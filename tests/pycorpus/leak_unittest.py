# The twin of unittest_work.py with a leak: a test keeps what it made in
# a module-global list (LEAK: the bytes are made at that line).
import json
import unittest

KEPT = []


class TestWork(unittest.TestCase):
    def test_json(self):
        doc = json.dumps({"k%d" % i: list(range(i)) for i in range(200)})
        KEPT.append(doc.encode() * 4)  # LEAK
        self.assertEqual(len(json.loads(doc)), 200)

    def test_more(self):
        for i in range(30):
            self.test_json()


if __name__ == "__main__":
    unittest.main()
