# Code run in a subinterpreter between two kept buffers of the main one:
# the main interpreter's frames stay right before and after it.
try:
    import _interpreters as si
except ImportError:
    import _xxsubinterpreters as si

keep = []


def before():
    keep.append(bytearray(1_700_000))  # BEFORE


def after():
    keep.append(bytearray(1_800_000))  # AFTER


before()  # MAIN-BEFORE
iid = si.create()
si.run_string(iid, "x = [bytearray(1000) for _ in range(100)]\n"
              "def f():\n    return bytearray(50_000)\ny = f()\n")
si.destroy(iid)
after()  # MAIN-AFTER
print(len(keep))
