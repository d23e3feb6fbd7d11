#!/bin/sh
# t4040: Python frames read from the thread's own frame chain (the default,
# MEMPROV_PYTHON_MODE=walk) against the profile-function shadow stack
# (MEMPROV_PYTHON_MODE=profile): which mode runs (threading._profile_hook
# is set only by the profile mode), the same leak sites in both, the
# fallback where the walk has no layout (3.9), a bad mode value, a worker
# thread allocating with the GIL released, subinterpreters, and stacks
# deeper than a stack record holds.
. "$(dirname "$0")/test-lib.sh"

PY=$TOP/tests/py
PYENV=/root/.pyenv/versions
export PY

# ln FILE TAG: the line carrying "# TAG"
ln() { grep -n "# $2\$" "$PY/$1" | cut -d: -f1; }

# traced MODE PYTHON SCRIPT: leak sites of SCRIPT in sites.txt; stdout out.txt
traced() {
	rm -f "$TRASH/t.trace"
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" \
		MEMPROV_PYTHON_MODE="$1" "$2" "$PY/$3" >out.txt 2>err.txt
	test_cmp /dev/null err.txt
	memprov leaks --json "$TRASH/t.trace" >leaks.json
	/usr/bin/python3 "$PY/sites.py" leaks.json "$3" >sites.txt
}

# mode_of MODE PYTHON: the mode that ran, as the script sees it
mode_of() {
	rm -f "$TRASH/m.trace"
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/m.trace" \
		MEMPROV_PYTHON_MODE="$1" "$2" -c '
import threading
def f(n): return [bytearray(100) for _ in range(n)]
for i in range(100): f(10)
print("walk" if threading._profile_hook is None else "profile")'
}

gil_expect="heap 1 1234567 grab@gil_free.py:$(ln gil_free.py GRAB) < work@gil_free.py:$(ln gil_free.py WORK)"
sub_expect="heap 1 1800001 after@subinterp.py:$(ln subinterp.py AFTER) < <module>@subinterp.py:$(ln subinterp.py MAIN-AFTER)
heap 1 1700001 before@subinterp.py:$(ln subinterp.py BEFORE) < <module>@subinterp.py:$(ln subinterp.py MAIN-BEFORE)"
deep_expect="heap 1 1600001 rec@deep.py:$(ln deep.py BOTTOM)$(i=1; while [ $i -lt 128 ]; do
	printf ' < rec@deep.py:%s' "$(ln deep.py RECURSE)"; i=$((i + 1)); done)"
export gil_expect sub_expect deep_expect

# memo_expect: walk_memo.py's leak sites as the script itself names them
memo_expect() {
	i=39
	while [ $i -ge 0 ]; do
		echo "heap 1 $((2100001 + i)) f@gen.py:$((i + 2)) < <module>@gen.py:$((i + 3)) < runner@walk_memo.py:$(ln walk_memo.py EXEC)"
		i=$((i - 1))
	done
}
# the kept buffers of walk_memo.py's frames of its own: the two threads'
# (thread 1 20 frames deeper), two lines of one frame, a generator
memo_own_expect() {
	k="grab@walk_memo.py:$(ln walk_memo.py GRAB) < worker@walk_memo.py:$(ln walk_memo.py KEEP)"
	d=" < worker@walk_memo.py:$(ln walk_memo.py DOWN)"
	g="grab@walk_memo.py:$(ln walk_memo.py GRAB)"
	printf 'heap 3 7503006 %s' "$k"; i=0; while [ $i -lt 30 ]; do printf '%s' "$d"; i=$((i + 1)); done; echo
	printf 'heap 3 7500006 %s' "$k"; i=0; while [ $i -lt 10 ]; do printf '%s' "$d"; i=$((i + 1)); done; echo
	echo "heap 3 6900006 $g < two_lines@walk_memo.py:$(ln walk_memo.py SECOND) < <module>@walk_memo.py:$(ln walk_memo.py TWO)"
	echo "heap 3 6600006 $g < two_lines@walk_memo.py:$(ln walk_memo.py FIRST) < <module>@walk_memo.py:$(ln walk_memo.py TWO)"
	echo "heap 1 2400003 $g < gen@walk_memo.py:$(ln walk_memo.py YIELD-2) < <module>@walk_memo.py:$(ln walk_memo.py GEN)"
	echo "heap 1 2400002 $g < gen@walk_memo.py:$(ln walk_memo.py YIELD-1) < <module>@walk_memo.py:$(ln walk_memo.py GEN)"
}

for py in /usr/bin/python3 $PYENV/3.10.13/bin/python3 $PYENV/3.11.7/bin/python3 \
	  $PYENV/3.12.1/bin/python3 $PYENV/3.13.0/bin/python3; do
	[ -x "$py" ] || continue
	export py
	test_expect_success "walk by default, profile when asked: $py" '
		mode_of "" "$py" >got && echo walk >expect && test_cmp expect got &&
		mode_of walk "$py" >got && test_cmp expect got &&
		mode_of profile "$py" >got && echo profile >expect && test_cmp expect got
	'
	test_expect_success "same leak sites in walk and profile modes: $py" '
		traced walk "$py" stacks.py && grep -E "^at |^heap 1 1[1-4]00001 " sites.txt >walk.txt &&
		traced profile "$py" stacks.py && grep -E "^at |^heap 1 1[1-4]00001 " sites.txt >profile.txt &&
		test_cmp walk.txt profile.txt && test $(wc -l <walk.txt) = 5
	'
	test_expect_success "worker thread allocating with the GIL released: $py" '
		for m in walk profile; do
			traced $m "$py" gil_free.py &&
			echo 1 >expect && test_cmp expect out.txt &&
			grep "^heap 1 1234567 " sites.txt >got &&
			echo "$gil_expect" >expect && test_cmp expect got || exit 1
		done
	'
	test_expect_success "a subinterpreter between two allocations: $py" '
		traced walk "$py" subinterp.py &&
		echo 2 >expect && test_cmp expect out.txt &&
		grep -E "^heap 1 1[78]00001 " sites.txt >got &&
		echo "$sub_expect" >expect && test_cmp expect got
	'
	test_expect_success "the memo of a thread's frames: the same sites as without it: $py" '
		traced walk "$py" walk_memo.py && grep -q " reused\$" out.txt &&
		/usr/bin/python3 "$PY/sites.py" leaks.json "*" >memo.txt &&
		/usr/bin/python3 "$PY/sites.py" leaks.json walk_memo.py | grep -E "^heap [13] (2[2-5]|7[5-9]|6[6-9])" >own.txt &&
		MEMPROV_UNWIND_MEMO=0 traced walk "$py" walk_memo.py &&
		/usr/bin/python3 "$PY/sites.py" leaks.json "*" >nomemo.txt &&
		test_cmp nomemo.txt memo.txt &&
		grep "^heap 1 21000" memo.txt | sed "s/ < [^ ]*@threading\.py:.*//" >got &&
		memo_expect >expect && test_cmp expect got &&
		memo_own_expect >expect && test_cmp expect own.txt
	'
	test_expect_success "300 frames deep: the innermost 128 recorded: $py" '
		traced walk "$py" deep.py &&
		grep "^heap 1 1600001 " sites.txt >got &&
		echo "$deep_expect" >expect && test_cmp expect got
	'
done

if [ -x "$PYENV/3.9.18/bin/python3" ]; then
	test_expect_success 'Python 3.9 (no walk layout): the profile mode, same sites' '
		py=$PYENV/3.9.18/bin/python3 &&
		mode_of "" "$py" >got && echo profile >expect && test_cmp expect got &&
		traced "" "$py" stacks.py && grep -E "^at |^heap 1 1[1-4]00001 " sites.txt >got &&
		test $(wc -l <got) = 5 && head -n 1 got >at && echo "at main-end" >expect &&
		test_cmp expect at
	'
fi

test_expect_success 'MEMPROV_PYTHON_MODE=bogus: one warning, then the walk' '
	rm -f b.trace &&
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/b.trace" \
		MEMPROV_PYTHON_MODE=bogus /usr/bin/python3 -c "print(1)" >out 2>err &&
	echo 1 >expect && test_cmp expect out &&
	grep -c "MEMPROV_PYTHON_MODE" err >n && echo 1 >expect && test_cmp expect n &&
	mode_of bogus /usr/bin/python3 2>/dev/null >got && echo walk >expect && test_cmp expect got
'

test_expect_success 'MEMPROV_MARK_ON uses the profile function (marks need call events)' '
	rm -f m.trace &&
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/m.trace" \
		MEMPROV_MARK_ON=__main__:f /usr/bin/python3 -c "
import threading
def f(): return bytearray(100)
for i in range(4): f()
print(threading._profile_hook is not None)" >out &&
	echo True >expect && test_cmp expect out &&
	memprov dump m.trace | grep -c "label=\"__main__:f\"" >n && echo 4 >expect && test_cmp expect n
'

test_done
