#!/bin/sh
# t4020: `memprov run --mark-on MODULE:FUNCTION` (MEMPROV_MARK_ON) puts one
# mark per call of the named Python function, for plain functions,
# generators (not per resume) and coroutines; MODULE is __name__ or the
# file's basename. The end of the main module gets one "__main__ end" mark.
. "$(dirname "$0")/test-lib.sh"

PY=$TOP/tests/py
PYENV=/root/.pyenv/versions
export PY

for py in /usr/bin/python3 $PYENV/3.11.7/bin/python3 $PYENV/3.12.1/bin/python3 \
	  $PYENV/3.10.13/bin/python3 $PYENV/3.13.0/bin/python3; do
	[ -x "$py" ] || continue
	export py
	test_expect_success "one mark per call: $py" '
		rm -f m.trace &&
		timeout 60 "$MEMPROV_CLI" run -o "$TRASH/m.trace" --mark-on __main__:step \
			--mark-on marks:ticks --mark-on __main__:job --mark-on nosuch:step \
			-- "$py" "$PY/marks.py" >out 2>err &&
		echo "memprov: trace written to $TRASH/m.trace" >expect-err &&
		test_cmp expect-err err &&
		memprov dump m.trace | sed -n "s/.* mark serial=[0-9]* label=//p" |
			sort | uniq -c | sed "s/^ *//" >got &&
		cat >expect <<-\EOF_ &&
		1 "__main__ end" flags=main-end
		2 "__main__:job"
		7 "__main__:step"
		3 "marks:ticks"
		EOF_
		test_cmp expect got
	'
done

test_expect_success 'MEMPROV_MARK_ON without memprov run; a bad entry warns once' '
	rm -f e.trace &&
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/e.trace" \
		MEMPROV_MARK_ON=marks:step,bogus /usr/bin/python3 "$PY/marks.py" 2>err &&
	grep -c "MEMPROV_MARK_ON" err >n && echo 1 >expect && test_cmp expect n &&
	memprov dump e.trace | grep -c "label=\"marks:step\"" >n &&
	echo 7 >expect && test_cmp expect n
'

test_done
