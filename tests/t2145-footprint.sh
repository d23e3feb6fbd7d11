#!/bin/sh
# t2145-footprint.sh - memprov's own footprint does not grow with the
# events it records: a program with a flat heap and 3 million allocations
# on 2 threads. The trace's pages leave the address space once written,
# so the resident size the trace records grows from the mark "begin" to
# the mark "end" by at most a few chunks per thread more than the bare
# run's own resident size between the same points, the samples leave the
# trace's own pages out (the header and at most 2 chunks per thread), and `memprov
# timeline` finds no gap between resident and tracked memory. The scan at
# exit reads the trace back without mapping its dropped pages in again,
# the finished segments of a long trace leave the address space, and under
# an address-space limit memprov reserves less of it.
# And 2,000 short-lived threads cost a block of trace each, none left
# mapped.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/flatheap" ||
	test_skip "interpose/libmemprov.so, analyzer/memprov or tests/bin/flatheap not built"

# at-marks TRACE: "RSS_BEGIN RSS_END TRACE_END": the process's whole
# resident size at the marks "begin" and "end" (the samples with the
# trace's share added back), and the trace's share at "end"
at_marks() {
	/usr/bin/python3 - "$TOP/tests/helper" "$1" <<-\PY
	import struct, sys
	sys.path.insert(0, sys.argv[1])
	import mptrace
	mark, got = None, {}
	for ts, typ, fl, fn, kind, b, ser in mptrace.Trace(sys.argv[2]).records():
	    if typ == 7:
	        mark = b[8:].split(b"\0")[0]
	    elif typ == 9 and mark and mark not in got:
	        got[mark] = struct.unpack_from("<QQQ", b + bytes(8))
	whole = lambda m: got[m][0] + got[m][2]
	print(whole(b"begin"), whole(b"end"), got[b"end"][2])
	PY
}

# run OPS NAME: "BEGIN END" of the bare run's own RSS, at-marks of the
# traced run, and the trace's pages mapped at its end (its own
# /proc/self/smaps), in fig.NAME
run() {
	"$BIN/flatheap" 2 $1 >bare.$2 &&
	timeout 300 env MEMPROV_OUTPUT=$2.trace LD_PRELOAD=$MEMPROV_LIB "$BIN/flatheap" 2 $1 >traced.$2 &&
	tail -n 1 bare.$2 >a && tail -n 1 traced.$2 >b && test_cmp a b &&
	at_marks $2.trace >m &&
	echo "$(sed -n "s/^begin //p" bare.$2) $(sed -n "s/^rss //p" bare.$2) $(cat m)" \
		"$(sed -n "s/^trace //p" traced.$2)" >fig.$2 &&
	cat fig.$2 && test "$(wc -w <fig.$2)" = 6
}

test_expect_success 'a small run: what memprov costs whatever the events' '
	run 1000 small &&
	read b0 b1 t0 t1 trace mapped <fig.small &&
	echo "fixed cost at the end mark: $((t1 - b1)) B"
'

# The growth from mark to mark within each run: what memprov adds to the
# process does not cancel out between two processes (the program's own
# resident size at the end of the churn moves by 100-300 KiB from run to
# run, bare), but within one run it does. Traced growth minus bare
# growth, 8 runs: 70-266 KiB while the kernel mapped more of the trace
# than the writers populated (see write_zeros), 4-160 KiB since (6
# runs; the bare growth alone moves by 64 KiB). A trace
# whose pages stayed mapped (madvise skipped) grows 42 MB more.
test_expect_success '3 million allocations: the trace adds a few chunks per thread at most' '
	run 1500000 big &&
	"$MEMPROV_CLI" stats --json big.trace >s.json &&
	/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check s.json "=j[\"events\"]>6000000==true" &&
	read b0 b1 t0 t1 trace mapped <fig.big &&
	echo "growth from begin to end: bare $((b1 - b0)) B, traced $((t1 - t0)) B" &&
	echo "trace pages: $trace B in the sample, $mapped B mapped" &&
	# main and 2 threads: the header page, and per thread its chunk and
	# at most one finished one (released once it is 32 KiB), 32 KiB each
	test $trace -gt 0 && test $trace -le $((4096 + 3 * 2 * 32768)) &&
	# the share the samples leave out is what is mapped (main may take a
	# 16 KiB chunk between the sample and the count; the kernel mapped 28
	# to 124 KiB more when the zeros reserving space were written 256 KiB
	# at a time, folios that large)
	test $mapped -ge $trace && test $mapped -le $((trace + 16384)) &&
	test $((t1 - t0 - (b1 - b0))) -le $((3 * 3 * 32768 + 256 * 1024))
'

# The threads' own arenas and stacks make about 1 MiB of resident memory
# no allocation accounts for (bare too); the trace, counted, made 50 MiB
test_expect_success 'memprov timeline: no gap between resident and tracked memory' '
	"$MEMPROV_CLI" timeline --min-gap 4M big.trace >tl.txt && tail -n 2 tl.txt &&
	grep "^no gap: " tl.txt &&
	"$MEMPROV_CLI" timeline --min-gap 4M --json big.trace >tl.json &&
	/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check tl.json gap.flagged=false
'

# scan-growth TRACE: the process's whole resident size at exit (the last
# sample, taken after the scan) less its size at the mark "end"
scan_growth() {
	/usr/bin/python3 - "$TOP/tests/helper" "$1" <<-\PY
	import struct, sys
	sys.path.insert(0, sys.argv[1])
	import mptrace
	mark, end, last = None, None, None
	for ts, typ, fl, fn, kind, b, ser in mptrace.Trace(sys.argv[2]).records():
	    if typ == 7:
	        mark = b[8:].split(b"\0")[0]
	    elif typ == 9:
	        s = struct.unpack_from("<QQQ", b + bytes(8))
	        if mark == b"end" and end is None:
	            end = s
	        last = s
	print(last[0] + last[2] - end[0] - end[2])
	PY
}

# The scan at exit reads the trace back. Its first megabyte was read
# through the trace's mapping, where the pages of finished chunks had been
# dropped: they were mapped in again and stayed in the process's resident
# memory to its end (1.26-1.36 MiB of growth from "end" to exit, 4 runs;
# 0.21-0.34 MiB now that those chunks are read with pread).
test_expect_success 'the scan at exit does not map released trace pages in again' '
	timeout 120 env MEMPROV_OUTPUT=scan.trace LD_PRELOAD=$MEMPROV_LIB \
		"$BIN/flatheap" 1 200000 >out &&
	test $(stat -c %s scan.trace) -gt 2097152 &&
	"$MEMPROV_CLI" dump scan.trace | grep -q " reach status=done " &&
	g=$(scan_growth scan.trace) && echo "resident growth from the end mark to exit: $g B" &&
	test $g -le $((768 * 1024))
'

cat >"$TRASH/segs.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *keep[1000];
int main(int argc, char **argv)
{
	long n = atol(argv[1]), i;
	unsigned long a, b, sum = 0;
	char line[4096];
	int maps = 0;
	FILE *f;

	for (i = 0; i < n; i++) {
		free(keep[i % 1000]);
		keep[i % 1000] = malloc(16 + (size_t)(i % 200));
	}
	/* the address space the trace's mappings take now */
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, argv[2]) && sscanf(line, "%lx-%lx", &a, &b) == 2) {
			sum += b - a;
			maps++;
		}
	printf("mapped %lu in %d\n", sum, maps);
	for (i = 0; i < 1000; i++)
		free(keep[i]);
	return 0;
}
CEOF

# The trace is mapped in segments: 8 MiB in small ones, then 8 MiB each.
# A segment whose chunks are all finished is unmapped: before, a long
# run's trace held its whole size in address space (60 MiB for this one,
# where a program under `ulimit -v` could not map it).
test_expect_success 'finished segments of a long trace leave the address space' '
	cc -O1 -o segs segs.c &&
	timeout 120 env MEMPROV_OUTPUT=segs.trace LD_PRELOAD=$MEMPROV_LIB ./segs 6000000 segs.trace >out &&
	cat out && size=$(stat -c %s segs.trace) && echo "trace $size B" &&
	test $size -gt $((40 << 20)) &&
	mapped=$(sed -n "s/^mapped \([0-9]*\) in .*/\1/p" out) &&
	# the header, the first megabyte'"'"'s six small segments (the view reads
	# them), the segment in use, and slack; the three small segments past
	# the first megabyte (7 MiB) went too (16.8 MB in 11 mappings before)
	test $mapped -le $((4096 + (1 << 20) + (8 << 20) + (4 << 20))) &&
	"$MEMPROV_CLI" stats --json segs.trace >s.json &&
	/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check s.json "=j[\"events\"]>=12000000==true"
'

cat >"$TRASH/vmsize.c" <<'CEOF'
#include <stdio.h>
#include <string.h>
int main(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmSize:", 7))
			fputs(line + 7, stdout);
	return 0;
}
CEOF

# Under an address-space limit memprov's stack-id table reserves 1.6 MiB,
# not 9: the program's own mappings have the room (13.5 MB of address
# space under memprov, 6.3 MB under a limit, 2.5 bare).
test_expect_success 'an address-space limit: memprov reserves less of it' '
	command -v prlimit >/dev/null || { echo "prlimit missing"; false; } &&
	cc -O1 -o vmsize vmsize.c &&
	env MEMPROV_OUTPUT=vm.%p.trace LD_PRELOAD=$MEMPROV_LIB ./vmsize >free.kb &&
	prlimit --as=1000000000 env MEMPROV_OUTPUT=vm.%p.trace LD_PRELOAD=$MEMPROV_LIB \
		./vmsize >limited.kb &&
	free=$(tr -dc 0-9 <free.kb) limited=$(tr -dc 0-9 <limited.kb) &&
	echo "address space: $free kB, $limited kB under prlimit --as" &&
	test $((free - limited)) -ge 6144
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

# libmemprov.so's text is ordered (interpose/hot.txt, scripts/hot-text.sh):
# the functions every process runs, then those of Python processes, then
# those of native ones. A Python process runs only the first two groups,
# so no page of the text past the 64 KiB window that holds their end is
# mapped in it (the kernel maps a file 64 KiB around each fault): every
# page of it was before, 208 KiB.
# Which pages of a file mapping a fault maps is the kernel's choice. It
# maps the pages of the page cache in the 64 KiB (fault_around_bytes) of
# the address space around the fault: aligned on the address, not on the
# file's offset, and ld.so maps a library at any page, so the window can
# reach 60 KiB past the last page run; the test computes it from where the
# text lies. And a fault maps the whole large folio the page cache holds
# the page in: ext4 under Linux 6.18 keeps a file written in big writes (a
# linker's output, a copy by cp) in folios of up to 2 MiB (128 KiB for
# libmemprov.so here), so on a disk the pages mapped say more of how the
# file was written than of the code run: the test loads a copy from tmpfs
# without huge pages, which holds a file in single pages.
# small_folios_dir makes that directory, $shm, or fails.
small_folios_dir () {
	df -T /dev/shm 2>/dev/null | tail -1 | grep -q " tmpfs " || return 1
	grep -q "\[never\]\|\[deny\]" /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null || return 1
	for f in /sys/kernel/mm/transparent_hugepage/hugepages-*/shmem_enabled; do
		test -e "$f" || continue
		grep -q "\[never\]\|\[inherit\]" "$f" || return 1
	done
	shm=$(mktemp -d /dev/shm/memprov-t2145.XXXXXX)
}

test_expect_success 'a Python process maps libmemprov.so'"'"'s text only as far as its Python functions' '
	syms="$TOP/interpose/libmemprov-syms.so" &&
	sed -n "/^# every traced process/,/^# native processes/p" "$TOP/interpose/hot.txt" |
		grep -v "^[#*]" >hot.names &&
	nm -S "$syms" >syms.txt && readelf -SW "$syms" >sections.txt &&
	set -- $(/usr/bin/python3 -c "
import re
hot = set(open(\"hot.names\").read().split())
end = 0
for l in open(\"syms.txt\"):
    p = l.split()
    if len(p) == 4 and p[2] in \"tTW\" and p[3].split(\".\")[0] in hot:
        end = max(end, int(p[0], 16) + int(p[1], 16))
text = [l.split() for l in open(\"sections.txt\") if re.search(r\" \\.text \", l)][0]
i = text.index(\".text\")
print(end, int(text[i + 2], 16) + int(text[i + 4], 16))") &&
	end=$1 text_end=$2 &&
	echo "hot groups end at $end, the text at $text_end" &&
	test "$end" -gt 0 && test $((text_end - end)) -gt $((2 * 65536)) &&
	cat >calls.py <<-\EOF &&
	import struct
	def f(n):
	    return [str(i) * 3 for i in range(n)]
	for k in range(2000):
	    f(50)
	for line in open("/proc/self/maps"):
	    p = line.split()
	    if p[-1].endswith("/libmemprov.so") and p[1] == "r-xp":
	        lo, hi = (int(x, 16) for x in p[0].split("-"))
	        base = lo - int(p[2], 16)
	        with open("/proc/self/pagemap", "rb") as pm:
	            pm.seek(lo // 4096 * 8)
	            b = pm.read((hi - lo) // 4096 * 8)
	        mapped = [lo + 4096 * i - base for i in range((hi - lo) // 4096)
	                  if struct.unpack_from("Q", b, 8 * i)[0] >> 63]
	        print(len(mapped), max(mapped), base % 65536)
	EOF
	if ! small_folios_dir; then echo "no tmpfs with small folios: not checked"; exit 0; fi &&
	cp "$MEMPROV_LIB" "$shm/libmemprov.so" &&
	env LD_PRELOAD="$shm/libmemprov.so" MEMPROV_OUTPUT="$TRASH/calls.trace" /usr/bin/python3 calls.py >mapped;
	rc=$? && rm -rf "$shm" && test $rc = 0 &&
	read pages last skew <mapped &&
	window=$(( ((skew + end - 1) / 65536 + 1) * 65536 - skew )) &&
	echo "text pages mapped: $pages, the last at $last; the window of the hot end closes at $window" &&
	test "$last" -lt "$window"
'

# The walk (the default) asks CPython for no code-extra index: that call
# faulted in the 64 KiB of python3.11's text around it, which neither the
# program nor the walk runs otherwise (64 KiB more of every traced Python
# process). The profile mode, which caches code ids there, still asks.
# python3.11 runs from a copy on tmpfs where small_folios_dir makes one:
# on a disk, a large folio of its page cache would map that page with
# whatever the program runs beside it.
test_expect_success 'the walk leaves python3.11'"'"'s text around _PyEval_RequestCodeExtraIndex out' '
	py=$(readlink -f /usr/bin/python3) &&
	if ! od -An -tu2 -j16 -N2 "$py" | grep -qw 2; then echo "not ET_EXEC: not checked"; exit 0; fi &&
	at=$(nm -D "$py" | sed -n "s/^\([0-9a-f]*\) T _PyEval_RequestCodeExtraIndex$/\1/p") &&
	test -n "$at" &&
	cat >extra.py <<-EOF &&
	import struct
	def f(n):
	    return [str(i) * 3 for i in range(n)]
	for k in range(500):
	    f(50)
	with open("/proc/self/pagemap", "rb") as pm:
	    pm.seek(0x$at // 4096 * 8)
	    print(struct.unpack("Q", pm.read(8))[0] >> 63)
	EOF
	run=/usr/bin/python3 shm= &&
	if small_folios_dir; then cp "$py" "$shm/" && run=$shm/${py##*/}; fi &&
	PYTHONHOME=/usr "$run" extra.py >bare.m &&
	env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/x1.trace" PYTHONHOME=/usr "$run" extra.py >walk.m &&
	env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/x2.trace" MEMPROV_PYTHON_MODE=profile \
		PYTHONHOME=/usr "$run" extra.py >profile.m;
	rc=$? && rm -rf ${shm:+"$shm"} && test $rc = 0 &&
	echo "its page mapped (python3.11 run from $run): bare $(cat bare.m), walk $(cat walk.m), profile $(cat profile.m)" &&
	if test "$(cat bare.m)" = 1; then echo "the program maps it itself: not checked"; exit 0; fi &&
	test "$(cat walk.m)" = 0 && test "$(cat profile.m)" = 1
'

test_done
