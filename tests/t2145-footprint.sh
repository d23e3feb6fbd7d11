#!/bin/sh
# t2145-footprint.sh - memprov's own footprint does not grow with the
# events it records: a program with a flat heap and 3 million allocations
# on 2 threads. The trace's pages leave the address space once written,
# so the resident size the trace records at the end stays within a few
# chunks per thread of the bare run's (after memprov's fixed cost, taken
# from a run of 1,000 allocations), the samples leave the trace's own
# pages out (the header and at most 2 chunks per thread), and `memprov
# timeline` finds no gap between resident and tracked memory. And 2,000
# short-lived threads cost a block of trace each, none left mapped.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/flatheap" ||
	test_skip "interpose/libmemprov.so, analyzer/memprov or tests/bin/flatheap not built"

# at-end TRACE: "RSS TRACE_BYTES" of the sample taken at the mark "end"
at_end() {
	/usr/bin/python3 - "$TOP/tests/helper" "$1" <<-\PY
	import struct, sys
	sys.path.insert(0, sys.argv[1])
	import mptrace
	end = False
	for ts, typ, fl, fn, kind, b, ser in mptrace.Trace(sys.argv[2]).records():
	    if typ == 7 and b[8:].split(b"\0")[0] == b"end":
	        end = True
	    elif typ == 9 and end:
	        rss, vm, trace = struct.unpack_from("<QQQ", b + bytes(8))
	        print(rss, trace)
	        break
	PY
}

# run OPS NAME: the bare run's rss, then the traced run's sample
run() {
	"$BIN/flatheap" 2 $1 >bare.$2 &&
	timeout 300 env MEMPROV_OUTPUT=$2.trace LD_PRELOAD=$MEMPROV_LIB "$BIN/flatheap" 2 $1 >traced.$2 &&
	tail -n 1 bare.$2 >a && tail -n 1 traced.$2 >b && test_cmp a b &&
	echo "$(sed -n "s/^rss //p" bare.$2) $(at_end $2.trace)" >fig.$2 && cat fig.$2
}

test_expect_success 'a small run: what memprov costs whatever the events' '
	run 1000 small
'

test_expect_success '3 million allocations: the trace adds a few chunks per thread at most' '
	run 1500000 big &&
	"$MEMPROV_CLI" stats --json big.trace >s.json &&
	/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check s.json "=j[\"events\"]>6000000==true" &&
	read bare0 rss0 trace0 <fig.small && read bare rss trace <fig.big &&
	echo "fixed cost $((rss0 - bare0)) B; at 3M allocations $((rss - bare)) B; trace pages $trace B" &&
	# main and 2 threads: the header page, and per thread its chunk and
	# at most one finished one (released once it is 32 KiB), 32 KiB each
	test $trace -gt 0 && test $trace -le $((4096 + 3 * 2 * 32768)) &&
	test $((rss - bare)) -le $((rss0 - bare0 + 3 * 3 * 32768))
'

# The threads' own arenas and stacks make about 1 MiB of resident memory
# no allocation accounts for (bare too); the trace, counted, made 50 MiB
test_expect_success 'memprov timeline: no gap between resident and tracked memory' '
	"$MEMPROV_CLI" timeline --min-gap 4M big.trace >tl.txt && tail -n 2 tl.txt &&
	grep "^no gap: " tl.txt &&
	"$MEMPROV_CLI" timeline --min-gap 4M --json big.trace >tl.json &&
	/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check tl.json gap.flagged=false
'

cat >"$TRASH/short.c" <<'CEOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static void *volatile keep;
static void *one(void *arg)
{
	keep = malloc(100 + (size_t)arg % 50);
	free(keep);
	return NULL;
}
int main(void)
{
	for (long i = 0; i < 2000; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, one, (void *)i) || pthread_join(t, NULL))
			return 1;
	}
	puts("2000 threads");
	return 0;
}
CEOF

# last-rss TRACE: "RSS TRACE_BYTES" of the last sample (at exit)
last_rss() {
	/usr/bin/python3 - "$TOP/tests/helper" "$1" <<-\PY
	import struct, sys
	sys.path.insert(0, sys.argv[1])
	import mptrace
	last = None
	for ts, typ, fl, fn, kind, b, ser in mptrace.Trace(sys.argv[2]).records():
	    if typ == 9:
	        last = struct.unpack_from("<QQQ", b + bytes(8))
	print(last[0], last[2])
	PY
}

test_expect_success '2,000 short-lived threads: a block of trace each, none left mapped' '
	cc -O1 -o short short.c -lpthread &&
	timeout 120 env MEMPROV_OUTPUT=short.trace LD_PRELOAD=$MEMPROV_LIB ./short >out &&
	echo "2000 threads" >expect && test_cmp expect out &&
	"$MEMPROV_CLI" stats --json short.trace >s.json &&
	/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check s.json threads=2001 &&
	size=$(stat -c %s short.trace) && echo "trace $size B" &&
	# a 4 KiB chunk per thread, and the file reserved an eighth ahead
	test $size -le $((2000 * 4096 * 9 / 8 + 1048576)) &&
	set -- $(last_rss short.trace) && echo "trace pages mapped at exit: $2 B" &&
	test $2 -le $((4096 + 5 * 65536))
'

test_done
