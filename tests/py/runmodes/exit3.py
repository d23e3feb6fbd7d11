# exit3.py: keeps 8 MB in a global, then leaves with sys.exit(3).
import sys

kept = [bytearray(8_000_000)]  # KEEP
sys.exit(3)
