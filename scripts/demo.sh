#!/bin/sh
# demo.sh - what `make demo` runs: the Parla PArray eviction leak
# (scripts/parla_evict.py) diagnosed end to end by memprov.
#
#   scripts/demo.sh [DIR [WORKLOAD-FLAGS...]]
#
# Runs the workload in --bug mode under `memprov run`, then in --fixed
# mode, asks `memprov growth --json` for the growing sites over the
# iterations where eviction runs (the workload's own --json-summary says
# which, and how many bytes each should leak), writes the HTML report, and
# prints a diagnosis of about 20 lines. The workload's per-iteration output
# goes to DIR/bug.log and DIR/fixed.log, the traces to DIR/*.trace.
# DIR defaults to demo-out beside the Makefile; WORKLOAD-FLAGS replace the
# default shape (the reported one in miniature: 20 groups of 3 arrays of
# 8 MB, about 1 GB of memory, a few seconds).
#
# Exit status: 0 when memprov named the write-back line with the expected
# slope and the fixed run had no suspect; 1 otherwise (or on any failure).
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
MEMPROV=$TOP/analyzer/memprov
WL=scripts/parla_evict.py
OUT=demo-out            # beside the Makefile unless DIR is given
if [ $# -gt 0 ]; then
	case $1 in
	/*) OUT=$1 ;;
	*) OUT=$PWD/$1 ;;
	esac
	shift
fi
[ $# -gt 0 ] || set -- --groups 20 --arrays-per-group 3 --rows 1000000 --cols 2 --iters 20

die() { echo "demo: $*" >&2; exit 1; }

cd "$TOP" || exit 1
[ -x "$MEMPROV" ] && [ -f interpose/libmemprov.so ] ||
	die "memprov is not built: run make first (or make demo)"
$PY -c 'import numpy' 2>/dev/null ||
	die "$PY has no numpy: run make deps (Debian package python3-numpy)"
mkdir -p "$OUT" || die "cannot create $OUT"
rm -f "$OUT"/bug.trace "$OUT"/fixed.trace "$OUT"/*.json "$OUT"/bug.html
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

# run MODE: the workload under memprov; its output to OUT/MODE.log.
run() {
	mode=$1
	shift
	start=$(date +%s.%N)
	"$MEMPROV" run -o "$OUT/$mode.trace" -- $PY $WL --$mode "$@" \
		--json-summary "$OUT/$mode.json" >"$OUT/$mode.log" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	[ "$rc" = 0 ] || { tail -n 5 "$OUT/$mode.log" >&2; die "the $mode-mode run failed (status $rc); see $OUT/$mode.log"; }
	echo "$secs"
}

# Both runs take the same flags; "run bug FLAGS" puts --bug before them.
bug_secs=$(run bug "$@") || exit 1
fixed_secs=$(run fixed "$@") || exit 1

# The window: from the first iteration where every iteration evicts
# (before it the GPU budget is still filling; that is warm-up, not leak).
first=$($PY -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["steady_first_iter"] if s["steady_first_iter"] is not None else "")' "$OUT/bug.json") ||
	die "cannot read $OUT/bug.json"
[ -n "$first" ] || die "these flags never fill the GPU budget: nothing is evicted, nothing leaks"
after="iter $first"
"$MEMPROV" growth --json --after "$after" "$OUT/bug.trace" >"$OUT/bug-growth.json" ||
	die "memprov growth failed on $OUT/bug.trace"
"$MEMPROV" growth --json --after "$after" "$OUT/fixed.trace" >"$OUT/fixed-growth.json" ||
	die "memprov growth failed on $OUT/fixed.trace"
"$MEMPROV" html -o "$OUT/bug.html" --after "$after" "$OUT/bug.trace" >/dev/null 2>"$OUT/html.err" ||
	die "memprov html failed: $(cat "$OUT/html.err")"

exec $PY - "$TOP" "$OUT" "$after" "$bug_secs" "$fixed_secs" "$*" <<'EOF'
import json, os, sys

top, out, after, bug_secs, fixed_secs, flags = sys.argv[1:7]
load = lambda name: json.load(open(os.path.join(out, name)))
s, g, gf = load("bug.json"), load("bug-growth.json"), load("fixed-growth.json")
sf = load("fixed.json")

def rel(path):
    return os.path.relpath(path, top) if path and path.startswith(top + "/") else path

def mib(n):
    return "%.1f MiB" % (n / 1048576.0)

def rss(summary):
    """RSS over the window (warm-up excluded), as the workload measured it."""
    r, i = summary["rss"], summary["steady_first_iter"]
    if not r or i is None or i >= len(r):
        return "no RSS figure"
    return "RSS %.2f GB at iteration %d, %.2f GB at %d" % (r[i] / 1e9, i, r[-1] / 1e9,
                                                       len(r) - 1)

KINDS = {"heap": "host heap", "mmap": "host mmap", "pinned": "pinned host memory",
         "device": "device memory", "managed": "managed memory"}

def where(fr):
    return "%s (%s:%d)" % (fr["function"], rel(fr["file"]), fr["line"])

ws = s["write_back_site"]
expected = s["expected_leak_bytes_per_iter"]
print("== memprov demo: the Parla PArray eviction leak (scripts/parla_evict.py) ==")
print("workload: %d groups x %d arrays of %d x %d float32 (%d B each), GPU budget "
      "%d arrays, %d iterations" % (s["groups"], s["arrays_per_group"], s["rows"],
                                    s["cols"], s["array_bytes"], s["arrays_per_gpu"],
                                    s["iters"]))
print("ran: analyzer/memprov run -o %s/bug.trace -- %s %s --bug %s" %
      (out, "/usr/bin/python3", "scripts/parla_evict.py", flags))
print("  bug mode:   %s (%s s; its output: %s/bug.log)" % (rss(s), bug_secs, out))
print("  fixed mode: %s (%s s; the same flags with --fixed: %s/fixed.log)" %
      (rss(sf), fixed_secs, out))
print()
print('analyzer/memprov growth --after "%s" %s/bug.trace  (iterations %d-%d; '
      'before %d the GPU budget was filling):' %
      (after, out, g["window"]["first"], g["window"]["last"], g["window"]["first"]))
ok = True
sus = g.get("suspects", [])
if not sus:
    print("  no growing site: memprov missed the leak")
    ok = False
else:
    t = sus[0]
    py = t.get("python") or []
    top_fr = py[0] if py else None
    print("  suspect #1: %s grows %d B per iteration (%g blocks), %s live at the "
          "end, confidence %.2f" % (KINDS.get(t["kind"], t["kind"]), round(t["slope_bytes"]),
                                    t["slope_blocks"], mib(t["end_bytes"]),
                                    t["confidence"]))
    if top_fr:
        print("    at %s:%d in %s:" % (rel(top_fr["file"]), top_fr["line"],
                                       top_fr["function"]))
        try:
            with open(top_fr["file"]) as f:
                print("        " + f.read().splitlines()[top_fr["line"] - 1].strip())
        except (OSError, IndexError):
            pass
        if len(py) > 2:
            print("    called from %s <- %s" % (where(py[1]), where(py[2])))
    named = bool(top_fr and top_fr["file"] == ws["file"] and
                 top_fr["line"] == ws["line"] and
                 top_fr["function"] == ws["qualname"])
    ratio = t["slope_bytes"] / expected if expected else 0.0
    others = len(sus) - 1
    print("  other suspects: %s" % ("none" if not others else "%d, smaller "
          "(the full list: the same command without --json)" % others))
    print("  expected (the workload's summary): %d B per array x %d dirty "
          "evictions per iteration = %d B per iteration" %
          (s["array_bytes"], s["dirty_evictions_per_iter_steady"], expected))
    rss = s.get("rss_slope_bytes_per_iter")
    print("  memprov's slope / expected = %.3f%s" %
          (ratio, "; the process's RSS rose %d B per iteration" % rss
           if rss is not None else ""))
    ok = ok and named and abs(ratio - 1.0) <= 0.05
print()
fs = gf.get("suspects", [])
print('analyzer/memprov growth --after "%s" %s/fixed.trace: %s' %
      (after, out, "no growing site" if not fs else
       "%d growing sites, the first at %s" %
       (len(fs), where(fs[0]["python"][0]) if fs[0].get("python") else "?")))
print("  (the fix: evict writes back into the host array the PArray already holds)")
ok = ok and not fs
print()
print("HTML report: %s/bug.html (memprov html: timeline, growing sites, leaks, flame graph)"
      % out)
if ok:
    print("diagnosis: the leak is the evict write-back allocation, %s:%d (%s),\n"
          "           %d B per iteration; fixed mode does not grow" %
          (rel(ws["file"]), ws["line"], ws["qualname"], expected))
else:
    print("diagnosis: FAILED - memprov's report does not match the workload's "
          "expected write-back line %s:%d and %d B per iteration" %
          (rel(ws["file"]), ws["line"], expected))
sys.exit(0 if ok else 1)
EOF
