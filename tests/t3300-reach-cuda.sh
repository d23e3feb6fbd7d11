#!/bin/sh
# t3300-reach-cuda.sh - CUDA blocks are targets of the reachability scan
# at exit (tests/cuda/reach_scenario.c on the fake CUDA stack): a device,
# managed or pinned block whose address a global keeps is still
# reachable, one whose address was dropped is definitely lost, and a
# device block whose address only a lost heap block holds is indirectly
# lost. The driver's own tables list every block: they keep none alive.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
[ -x "$BIN/cuda-reach" ] || test_skip 'fake CUDA not built (needs /usr/local/cuda/include)'
[ -f "$MEMPROV_LIB" ] && [ -x "$MEMPROV_CLI" ] || test_skip 'libmemprov.so or memprov not built'
[ "$(uname -m)" = x86_64 ] || test_skip "the scan is x86-64 only"

SRC=$TOP/tests/cuda/reach_scenario.c
line() { grep -n "$1" "$SRC" | head -1 | cut -d: -f1; }

# rows: "kind class bytes line" per CUDA site and class (line in the scenario)
rows() {
	/usr/bin/python3 - "$1" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
rows = []
for s in d["sites"]:
    line = "-"
    for f in s.get("frames", []):
        if (f.get("file") or "").endswith("reach_scenario.c"):
            line = str(f.get("line"))
            break
    direct = (s["frames"][0].get("file") or "").endswith("reach_scenario.c")
    for cls, c in s["reach"].items():
        if c["blocks"] and (s["kind"] != "heap" or direct):
            rows.append("%s %s %d %s" % (s["kind"], cls, c["bytes"], line))
print("\n".join(sorted(rows)))
P
}

test_expect_success 'device, managed and pinned blocks: kept, dropped, held by a lost block' '
	timeout 60 env MEMPROV_OUTPUT="$TRASH/cu.trace" LD_LIBRARY_PATH="$BIN" \
		LD_PRELOAD="$MEMPROV_LIB" "$BIN/cuda-reach" &&
	memprov leaks --json cu.trace >cu.json &&
	jget --check cu.json reach.status=done &&
	rows cu.json >got &&
	cat >expect <<-EOF &&
	device definitely_lost 1000 $(line REACH_DEV_LOST)
	device indirectly_lost 5000 $(line REACH_DEV_INDIRECT)
	device still_reachable 2000 $(line REACH_DEV_KEPT)
	heap definitely_lost 64 $(line REACH_HOLDER)
	managed definitely_lost 6000 $(line REACH_MAN_LOST)
	managed still_reachable 7000 $(line REACH_MAN_KEPT)
	pinned definitely_lost 3000 $(line REACH_PIN_LOST)
	pinned still_reachable 4000 $(line REACH_PIN_KEPT)
	EOF
	test_cmp expect got
'

test_expect_success 'leaks (text) lists the lost device block under definitely lost' '
	memprov leaks cu.trace >cu.txt &&
	sed -n "/^definitely lost:/,/^$/p" cu.txt >lost.txt &&
	grep -q "device cudaMalloc: 1 block, 1,000 B$" lost.txt &&
	! grep -q "2,000 B" lost.txt
'

test_done
