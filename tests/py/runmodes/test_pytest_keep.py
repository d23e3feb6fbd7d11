# test_pytest_keep.py: a pytest test that keeps 8 MB in a module global
# (`python -m pytest test_pytest_keep.py`).
kept = []


def test_keep():
    kept.append(bytearray(8_000_000))  # KEEP
