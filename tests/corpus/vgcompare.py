#!/usr/bin/python3
"""vgcompare.py - the live-at-exit stacks of valgrind and of memprov, in one
form, for tests/t2300-accuracy-corpus.sh.

  vgcompare.py valgrind LOG      valgrind's loss records (--show-leak-kinds=all)
  vgcompare.py memprov JSON      memprov's sites (`memprov leaks --json`)

Each record becomes "BYTES BLOCKS: frame <- frame ...", sorted (records
whose frames read the same summed), where a
frame is "function file:line", "function (module)" without a line, or
"??? (module)" without a name; file and module by base name. Frames of
the allocator at the inner end (valgrind's replacement malloc, strdup,
operator new) are left out, as memprov folds them into the API name, and
only records with a frame in the module given by --module are kept.
"""
import json
import os
import re
import sys

ALLOC = {"malloc", "calloc", "realloc", "free", "strdup", "__strdup", "strndup",
         "operator new", "operator new[]", "aligned_alloc", "memalign",
         "posix_memalign", "valloc", "reallocarray"}


def bare(fn):
    """A function's name without parameters ("operator new[]")."""
    return fn.split("(")[0] if not fn.startswith("(") else fn


def fold(frames):
    """Without the allocator's frames, nor valgrind's "(below main)"."""
    while frames and bare(frames[0][0]) in ALLOC:
        frames = frames[1:]
    return [f for f in frames if f[0] != "(below main)"]


def show(frames):
    out = []
    for fn, where in frames:
        out.append("%s %s" % (fn, where))
    return " <- ".join(out)


def valgrind(path, module):
    recs = []
    cur = None
    head = re.compile(r"==\d+== ([\d,]+) (?:\([\d,]+ direct, [\d,]+ indirect\) )?bytes in ([\d,]+) blocks are")
    frame = re.compile(r"==\d+==    (?:at|by) 0x[0-9A-F]+: (.*?) \((.*)\)$")
    for line in open(path, errors="replace"):
        m = head.match(line)
        if m:
            cur = [int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")), []]
            recs.append(cur)
            continue
        m = frame.match(line.rstrip("\n"))
        if m and cur is not None:
            fn, where = m.group(1), m.group(2)
            if where.startswith("in "):
                where = "(%s)" % os.path.basename(where[3:])
            cur[2].append((fn, where))
            continue
        if cur is not None and not line.strip("= 0123456789\n"):
            cur = None
    return [(b, n, fold(f)) for b, n, f in recs if any(module in w for _, w in f)]


def memprov(path, module):
    recs = []
    for s in json.load(open(path))["sites"]:
        frames = []
        for f in s["frames"]:
            mod = os.path.basename(f["module"] or "?")
            fn = f["function"]
            if f["file"]:
                where = "%s:%d" % (os.path.basename(f["file"]), f["line"])
            else:
                where = "(%s)" % mod
                if fn.startswith(mod + "+0x"):
                    fn = "???"
            frames.append((fn, where))
        if any(module in w for _, w in frames):
            recs.append((s["bytes"], s["blocks"], frames))
    return recs


def main(argv):
    kind, path, module = argv[0], argv[1], argv[2]
    recs = valgrind(path, module) if kind == "valgrind" else memprov(path, module)
    # valgrind keeps one record per distinct addresses; memprov one site
    # per distinct frames: sum records whose frames read the same
    total = {}
    for b, n, f in recs:
        t = total.setdefault(show(f), [0, 0])
        t[0] += b
        t[1] += n
    for line in sorted("%d %d: %s" % (b, n, k) for k, (b, n) in total.items()):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1:])
