#!/bin/sh
# t4030: the Python stack stays right through generators resumed after
# several yields, exceptions unwinding many frames, a generator closed
# early, coroutines under asyncio, `python -m`, and in a forked child
# (its own trace, with Python frames).
. "$(dirname "$0")/test-lib.sh"

PY=$TOP/tests/py
PYENV=/root/.pyenv/versions
export PY

# ln FILE TAG: the line carrying "# TAG"
ln() { grep -n "# $2\$" "$PY/$1" | cut -d: -f1; }

# traced PYTHON ARGS...: run under memprov, trace t.trace, leaks in sites.txt
traced() {
	rm -f "$TRASH/t.trace"
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" \
		"$@" >out.txt 2>err.txt
	test_cmp /dev/null err.txt
	memprov leaks --json "$TRASH/t.trace" >leaks.json
}

cat >"$TRASH/expect.in" <<EOF_
at main-end
heap 1 1400001 inner@stacks.py:$(ln stacks.py CORO-ALLOC) < outer@stacks.py:$(ln stacks.py OUTER-LINE) < <module>@stacks.py:$(ln stacks.py MAIN-ASYNC)
heap 1 1300001 after@stacks.py:$(ln stacks.py AFTER-ALLOC) < <module>@stacks.py:$(ln stacks.py MAIN-AFTER)
heap 1 1200001 catcher@stacks.py:$(ln stacks.py CATCH-ALLOC) < <module>@stacks.py:$(ln stacks.py MAIN-CATCH)
heap 1 1100001 gen@stacks.py:$(ln stacks.py GEN-ALLOC) < consume@stacks.py:$(ln stacks.py CONSUME-LINE) < <module>@stacks.py:$(ln stacks.py MAIN-CONSUME)
EOF_

for py in /usr/bin/python3 $PYENV/3.11.7/bin/python3 $PYENV/3.12.1/bin/python3 \
	  $PYENV/3.10.13/bin/python3 $PYENV/3.13.0/bin/python3; do
	[ -x "$py" ] || continue
	export py
	test_expect_success "generator, exception, closed generator, asyncio: $py" '
		traced "$py" "$PY/stacks.py" &&
		echo 4 >expect-out && test_cmp expect-out out.txt &&
		/usr/bin/python3 "$PY/sites.py" leaks.json stacks.py >sites.txt &&
		grep -E "^at |^heap 1 1[1-4]00001 " sites.txt >got &&
		test_cmp "$TRASH/expect.in" got
	'
done

test_expect_success 'python -m: frames and the main-end mark' '
	PYTHONPATH=$PY && export PYTHONPATH &&
	traced "$PYENV/3.12.1/bin/python3" -m leak_pure &&
	/usr/bin/python3 "$PY/sites.py" leaks.json leak_pure.py >sites.txt &&
	l=$(grep -n "return bytearray(8_000_000)" "$PY/leak_pure.py" | cut -d: -f1) &&
	grep -E "^at |make@" sites.txt | sed "s/ < <module>.*//" >got &&
	printf "at main-end\nheap 5 40000005 make@leak_pure.py:$l < work@leak_pure.py:%s\n" \
		$(grep -n "        a = make()" "$PY/leak_pure.py" | cut -d: -f1) >expect &&
	test_cmp expect got
'

test_expect_success 'forked child: its own trace with Python frames' '
	rm -f f.*.trace &&
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/f.%p.trace" \
		/usr/bin/python3 "$PY/forked.py" >out.txt 2>err.txt &&
	test_cmp /dev/null err.txt &&
	read child status <out.txt &&
	test "$status" = 0 &&
	test -f "f.$child.trace" &&
	memprov leaks --json "f.$child.trace" >leaks.json &&
	/usr/bin/python3 "$PY/sites.py" leaks.json forked.py >sites.txt &&
	grep "^heap 1 1500001 " sites.txt >got &&
	echo "heap 1 1500001 child_work@forked.py:$(ln forked.py CHILD-ALLOC) < <module>@forked.py:$(ln forked.py CHILD-CALL)" >expect &&
	test_cmp expect got
'

test_done
