# test_unit_keep.py: a unittest whose test keeps 8 MB in a module global
# (`python -m unittest test_unit_keep`).
import unittest

kept = []


class Keep(unittest.TestCase):
    def test_keep(self):
        kept.append(bytearray(8_000_000))  # KEEP
