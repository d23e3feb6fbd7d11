#!/bin/sh
# t4012: pymalloc's own bookkeeping, made when a program needs a new
# arena, is interpreter state, not the program's: the table of arena
# objects that new_arena() grows with realloc (16 entries, 768 B at
# start-up; 1.5 KiB once 17 arenas are live at once) and the nodes of its
# radix tree (calloc of 128 KiB for each new 16 GiB of addresses). Both
# were charged to whichever line of the program needed the arena, and a
# clean program that once held more than 16 MiB of small objects failed
# the gate. A program that keeps such objects still fails at its line.
. "$(dirname "$0")/test-lib.sh"

PYENV=/root/.pyenv/versions

cat >"$TRASH/arenas.py" <<\EOF
import mmap, sys
def work(big):
    # 20 GiB of address space, never touched (a bytearray would be
    # zeroed: 20 GiB of memory): the arenas then land in a new 16 GiB
    # range, and pymalloc adds a node to its radix tree
    space = [mmap.mmap(-1, 4 << 30) for _ in range(5)] if big else []
    objs = [(i, i) for i in range(300_000)]   # about 20 MiB of tuples, dropped on return
    return len(objs) + len(space)
print(work(len(sys.argv) > 1))
EOF

cat >"$TRASH/keep.py" <<\EOF
kept = []
def work():
    kept.append([str(i) * 3 for i in range(400_000)])
work()
EOF

# a genuine leak made on a line right after it needed new arenas (small
# floats, made by builtins: no record between): a list of 96 items doubled
# (1536 B, as the table grows) and bytes(131039) (a calloc of 128 KiB, as
# a radix node) are the program's, not pymalloc's (they were hidden)
cat >"$TRASH/hide.py" <<\EOF
import sys
n = 100_000
objs = [None] * n
kept = []
def work(what):
    l = [None] * 96
    if what == "list":
        kept.append((l.extend(l), any(map(objs.__setitem__, range(n), map(float, range(n)))))[0] or l)
    else:
        kept.append((any(map(objs.__setitem__, range(n), map(float, range(n)))), bytes(131039))[1])
work(sys.argv[1])
EOF

for py in /usr/bin/python3 $PYENV/3.11.7/bin/python3 $PYENV/3.12.1/bin/python3 \
	  $PYENV/3.13.0/bin/python3; do
	command -v "$py" >/dev/null || continue
	export py
	test_expect_success "$py: 20 MiB of small objects made and dropped in a function: the gate passes" '
		rm -rf a1 &&
		timeout 120 "$MEMPROV_CLI" run -d a1 -- "$py" arenas.py >a1.out 2>/dev/null &&
		echo 300000 >expect && test_cmp expect a1.out &&
		"$MEMPROV_CLI" check a1 >a1.check &&
		grep "live at the end of the main module: 0 B in 0 blocks" a1.check
	'
	test_expect_success "$py: the same in a new 16 GiB range of addresses: the gate passes" '
		rm -rf a2 &&
		timeout 120 "$MEMPROV_CLI" run -d a2 -- "$py" arenas.py big >a2.out 2>/dev/null &&
		echo 300005 >expect && test_cmp expect a2.out &&
		"$MEMPROV_CLI" check a2 >a2.check &&
		grep "live at the end of the main module: 0 B in 0 blocks" a2.check
	'
	test_expect_success "$py: a list of 400,000 strings kept in a global still fails at its line" '
		rm -rf k &&
		timeout 120 "$MEMPROV_CLI" run -d k -- "$py" keep.py >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check k >k.check &&
		grep "#1 heap realloc: .* live at the end of the main module in .* at .*keep.py:3$" k.check
	'
	test_expect_success "$py: a list doubled to 1536 B or bytes(131039) kept, right after new arenas: fails at its line" '
		rm -rf h1 h2 &&
		timeout 120 "$MEMPROV_CLI" run -d h1 -- "$py" hide.py list >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check h1 >h1.check &&
		grep "#1 heap realloc: 1.5 KiB in 1 block live at the end of the main module in work at .*hide.py:8$" h1.check &&
		timeout 120 "$MEMPROV_CLI" run -d h2 -- "$py" hide.py bytes >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check h2 >h2.check &&
		grep "#1 heap calloc: 128.0 KiB in 1 block live at the end of the main module in work at .*hide.py:10$" h2.check
	'
done

test_done
