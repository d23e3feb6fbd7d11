#!/bin/sh
# t9300-security.sh - the trace cannot be redirected and leaks nothing:
# a symlink planted at the trace path (live or dangling) is not followed
# (memprov takes the next numbered name, the link's target is untouched
# and nothing is created where a dangling link points); the trace is mode
# 0600 whatever the umask; a setuid program run by an unprivileged user
# (AT_SECURE) writes no trace, even with libmemprov.so linked in; values
# of the environment that are too long or out of range give one warning
# each and the default.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/stress" ||
	test_skip "interpose/libmemprov.so, analyzer/memprov or tests/bin/stress not built"
depth() { /usr/bin/python3 "$TOP/tests/progs/trace_walk.py" "$1" --header |
	sed -n "s/.*stack_depth=\([0-9]*\).*/\1/p"; }

test_expect_success 'symlink planted at the trace path: not followed, next name used' '
	echo "precious" >target && cp target target.orig &&
	ln -s "$TRASH/target" t.trace &&
	ln -s "$TRASH/nowhere" d.trace &&
	(umask 0; env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/t.trace \
		"$BIN/stress" longjmp 10 10 >o1) &&
	(umask 0; env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/d.trace \
		"$BIN/stress" longjmp 10 10 >o2) &&
	test_cmp target.orig target && test -L t.trace && test -L d.trace &&
	test ! -e nowhere &&
	test -f t.1.trace && test ! -L t.1.trace && test -f d.1.trace &&
	test "$(stat -c %a t.1.trace) $(stat -c %a d.1.trace)" = "600 600" &&
	"$MEMPROV_CLI" stats t.1.trace | grep "^ended: exited with status 0"
'

# A program that links libmemprov.so itself (absolute RPATH, which the
# loader honours in secure mode, unlike LD_PRELOAD paths): only the
# library's own AT_SECURE check can keep it from tracing.
test_expect_success 'setuid program run by nobody: no trace' '
	command -v setpriv >/dev/null || { echo "setpriv missing"; false; }
	d=$(mktemp -d /tmp/memprov-suid.XXXXXX) && chmod 755 "$d" &&
	echo "$d" >suid.dir &&
	printf "#include <stdlib.h>\nint main(void) { return malloc(10) ? 0 : 1; }\n" >p.c &&
	cc -o "$d/linked" p.c -L"$TOP/interpose" -lmemprov -Wl,-rpath,"$TOP/interpose" &&
	cp "$d/linked" "$d/plain" && cp "$BIN/stress" "$d/stress" &&
	mkdir "$d/out" && chmod 1777 "$d/out" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups env MEMPROV_OUTPUT="$d/out/plain.%p.trace" "$d/plain" &&
	test $(ls "$d/out" | grep -c "^plain") = 1 &&
	chmod u+s "$d/linked" "$d/stress" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups env MEMPROV_OUTPUT="$d/out/suid.%p.trace" "$d/linked" &&
	setpriv --reuid=65534 --regid=65534 --clear-groups env LD_PRELOAD=$MEMPROV_LIB \
		MEMPROV_OUTPUT="$d/out/pre.%p.trace" "$d/stress" longjmp 5 5 >/dev/null &&
	ls -l "$d/out" && test $(ls "$d/out" | wc -l) = 1
'
rm -rf "$(cat "$TRASH/suid.dir" 2>/dev/null || echo /nonexistent)"

test_expect_success 'MEMPROV_OUTPUT of 10,000 characters: one warning, default name' '
	mkdir long && cd long &&
	v=$(head -c 10000 /dev/zero | tr "\0" x) &&
	env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$v "$BIN/stress" longjmp 5 5 >out 2>err &&
	cat err && test $(wc -l <err) = 1 && grep "^memprov: ignoring MEMPROV_OUTPUT=.xxx" err &&
	test $(wc -c <err) -lt 300 &&
	ls && test -f memprov.*.trace && test $(ls | wc -l) = 3
'

test_expect_success 'negative, huge and malformed numbers: one warning each, defaults' '
	for kv in MEMPROV_DEPTH=-1 MEMPROV_DEPTH=99999999999999999999999 MEMPROV_DEPTH=257 \
		MEMPROV_DEPTH=0x10 MEMPROV_RSS_INTERVAL_MS=1e9 MEMPROV_RSS_INTERVAL_MS=60001 \
		MEMPROV_SAMPLE_BYTES=-5 MEMPROV_SAMPLE_BYTES=4294967296 MEMPROV_HEAP=2 \
		MEMPROV_DISABLE=-0 "MEMPROV_DEPTH= 8"; do
		rm -f n.trace &&
		env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/n.trace "$kv" \
			"$BIN/stress" longjmp 5 5 >out 2>err &&
		echo "$kv: $(cat err)" &&
		test $(wc -l <err) = 1 && grep -q "^memprov: ignoring ${kv%%=*}=" err &&
		test "$(depth n.trace)" = 64 || exit 1
	done
'

test_done
