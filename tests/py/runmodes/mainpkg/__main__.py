# mainpkg/__main__.py: `python -m mainpkg` keeps 8 MB in a module global.
kept = [bytearray(8_000_000)]  # KEEP
