#!/bin/sh
# t4018: the memory a thread set as its alternate signal stack (sigaltstack)
# is in use while it is set, not a leak of the line that allocated it.
# CPython's faulthandler.enable() takes 16.5 KiB with malloc and sets it as
# the stack; called in a function (main(), as many scripts do), the gate
# failed a clean program on that block at the enable() line. The hook
# records each sigaltstack call (MP_REC_SIGSTACK) and the reports set the
# block apart under the default rule <sigaltstack>. A block the thread no
# longer has as its stack, or one the scan at exit finds lost, still counts.
. "$(dirname "$0")/test-lib.sh"

jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

cat >"$TRASH/fh.py" <<\EOF
import faulthandler
def main():
    faulthandler.enable()
    print(sum(range(1000)))
main()
EOF

# the same size kept by the program itself, never a signal stack
cat >"$TRASH/keep.py" <<\EOF
import faulthandler
kept = []
def main():
    faulthandler.enable()
    kept.append(bytearray(40000))
    print(sum(range(1000)))
main()
EOF

cat >"$TRASH/ss.c" <<\EOF
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *keep_a, *keep_b;
int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "keep";
	stack_t ss;

	memset(&ss, 0, sizeof(ss));
	ss.ss_size = 40000;
	ss.ss_sp = keep_a = malloc(ss.ss_size);
	if (sigaltstack(&ss, NULL))
		return 2;
	if (!strcmp(mode, "replace") || !strcmp(mode, "disable")) {
		if (!strcmp(mode, "disable")) {
			ss.ss_flags = SS_DISABLE;
		} else {
			ss.ss_size = 50000;
			ss.ss_sp = keep_b = malloc(ss.ss_size);
		}
		if (sigaltstack(&ss, NULL))
			return 2;
	}
	if (!strcmp(mode, "drop"))
		keep_a = NULL; /* still the stack, but no pointer to it is left */
	printf("%s done\n", mode);
	return 0;
}
EOF

test_expect_success 'faulthandler.enable() in main: the gate passes on every Python, the 16.5 KiB stack set apart' '
	n=0
	test_pythons 3.10.13 3.11.7 3.12.1 3.13.0 >pys
	while read -r py; do
		n=$((n + 1))
		st=0 && memprov run -d "f$n" --check -- "$py" fh.py >out 2>err || st=$?
		cat err
		[ "$st" = 0 ]
		grep -qx 499500 out
		memprov dump f$n/*.trace | grep -q " sigstack addr=0x[0-9a-f]* size=[1-9]"
		memprov leaks --json f$n/*.trace >l.json
		# the rule names the block: its size is the one sigaltstack set
		size=$(memprov dump f$n/*.trace | sed -n "s/.* sigstack addr=0x[0-9a-f]* size=\([1-9][0-9]*\)$/\1/p" | head -n 1)
		jget --check l.json "=[r[\"bytes\"] for r in j[\"set_apart\"][\"suppressed\"][\"rules\"] if r[\"pattern\"] == \"<sigaltstack>\"]==[$size]"
		# --all shows it at the enable() line, as before
		memprov leaks --all --json f$n/*.trace >a.json
		jget --check a.json "=any(s[\"bytes\"] == $size and s[\"python\"][0][\"line\"] == 3 for s in j[\"sites\"] if s[\"python\"])==true"
	done <pys
	[ "$n" -ge 2 ]
'

test_expect_success 'what the program keeps beside it still fails the gate (23) at its line' '
	st=0 && memprov run -d k --check -- /usr/bin/python3 keep.py >out 2>err || st=$?
	cat err
	[ "$st" = 23 ]
	grep -q "39.1 KiB (40,0[0-9][0-9] B) in 1 block" err
	grep -q "in main at .*/keep.py:5$" err
'

test_expect_success 'native: the stack set now is set apart; the one replaced is not; disabled, neither' '
	cc -g -O0 -o ss ss.c
	for m in keep replace disable; do
		memprov run -d "n_$m" --check -- ./ss $m >out 2>err || { cat err; exit 1; }
		grep -qx "$m done" out
		memprov leaks --json n_$m/*.trace >$m.json
	done
	jget --check keep.json "=[r[\"bytes\"] for r in j[\"set_apart\"][\"suppressed\"][\"rules\"] if r[\"pattern\"] == \"<sigaltstack>\"]==[40000]"
	jget --check keep.json "=any(s[\"bytes\"] == 40000 for s in j[\"sites\"])==false"
	jget --check replace.json "=[r[\"bytes\"] for r in j[\"set_apart\"][\"suppressed\"][\"rules\"] if r[\"pattern\"] == \"<sigaltstack>\"]==[50000]"
	jget --check replace.json "=any(s[\"bytes\"] == 40000 for s in j[\"sites\"])==true"
	jget --check disable.json "=sum(r[\"bytes\"] for r in j[\"set_apart\"][\"suppressed\"][\"rules\"] if r[\"pattern\"] == \"<sigaltstack>\")==0"
	jget --check disable.json "=any(s[\"bytes\"] == 40000 for s in j[\"sites\"])==true"
'

test_expect_success 'native: a signal stack the scan at exit finds lost fails the gate (23)' '
	test -x ss || cc -g -O0 -o ss ss.c
	st=0 && memprov run -d drop --check -- ./ss drop >out 2>err || st=$?
	cat err
	[ "$st" = 23 ]
	grep -q "39.1 KiB in 1 block definitely lost at exit in main at .*ss.c:13$" err
'

test_done
