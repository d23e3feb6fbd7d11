#!/bin/sh
# t3300-reach-cuda.sh - CUDA blocks are targets of the reachability scan
# at exit (tests/cuda/reach_scenario.c on the fake CUDA stack): a device,
# managed or pinned block whose address a global keeps is still
# reachable, one whose address was dropped is definitely lost, and a
# device block whose address only a lost heap block holds is indirectly
# lost. The driver's own tables list every block: they keep none alive.
# The gate counts the lost ones, and the kept ones only with --reachable.
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

test_expect_success 'the gate fails on the lost CUDA blocks only; --reachable adds the kept ones' '
	st=0 && memprov check --kind device,pinned,managed cu.trace >g.txt || st=$? && test $st = 1 &&
	grep -qx "  device lost at exit (definitely and indirectly): 5.9 KiB (6,000 B) in 2 blocks (budget 0 B): over budget" g.txt &&
	grep -qx "  pinned lost at exit (definitely and indirectly): 2.9 KiB (3,000 B) in 1 block (budget 0 B): over budget" g.txt &&
	grep -q "^    #[0-9] device cudaMalloc: 1,000 B in 1 block definitely lost at exit in drop at .*reach_scenario.c:$(line REACH_DEV_LOST)$" g.txt &&
	grep -q "^    #[0-9] device cudaMalloc: 4.9 KiB in 1 block indirectly lost at exit in drop at .*reach_scenario.c:$(line REACH_DEV_INDIRECT)$" g.txt &&
	! grep -q "reach_scenario.c:$(line REACH_DEV_KEPT)$" g.txt &&
	st=0 && memprov check --reachable --kind device cu.trace >r.txt || st=$? && test $st = 1 &&
	grep -qx "  device live at exit: 7.8 KiB (8,000 B) in 3 blocks (budget 0 B): over budget" r.txt &&
	grep -q "^    #[0-9] device cudaMalloc: 2.0 KiB in 1 block live at exit (still reachable) in .*reach_scenario.c:$(line REACH_DEV_KEPT)$" r.txt
'

test_done
