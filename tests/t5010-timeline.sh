#!/bin/sh
# t5010-timeline.sh - `memprov timeline`: tracked live memory per kind and
# RSS at evenly spaced instants, marks, and the gap check (RSS rising while
# tracked memory does not), on tracegen traces with exact figures and on
# tests/growth/retention.c (glibc keeps freed memory) under libmemprov.so.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

# Ten rounds: 1 MiB allocated and freed each round (live flat), RSS +1 MiB
# per round; a mark per round. gen_retain STEP OUT: the samples also carry
# resident anonymous memory (anon=), 2 MiB and STEP more each round.
gen_retain() {
	{
		echo "header state=exited start=1000"
		echo "thread 1"
		echo "stack ts=1001 id=1 native=0x1001"
		i=0
		while [ $i -lt 10 ]; do
			ts=$((2000 + 1000 * i))
			anon=${1:+ anon=$((2097152 + $1 * i))}
			echo "alloc ts=$ts addr=0x100000 size=1048576 stack=1"
			echo "free ts=$((ts + 100)) addr=0x100000"
			echo "rss ts=$((ts + 200)) rss=$((4194304 + 1048576 * i)) vm=$((8388608 + 1048576 * i))$anon"
			echo "mark ts=$((ts + 300)) serial=$((i + 1)) label=round"
			i=$((i + 1))
		done
	} | "$TRACEGEN" -o "${2:-retain.trace}"
}

test_expect_success 'RSS rising with live memory flat: the gap is flagged, no site grows' '
	gen_retain &&
	memprov timeline --json retain.trace >t.json &&
	jget t.json gap.flagged gap.from gap.rss_start gap.rss_end gap.tracked_growth gap.gap_bytes \
		rss_samples "=len(j[\"points\"])" "=len(j[\"marks\"])" >out &&
	printf "true\nfirst-mark\n5242880\n13631488\n0\n8388608\n10\n20\n10\n" >expect &&
	test_cmp expect out &&
	memprov timeline retain.trace >t.txt &&
	grep -F "gap: RSS rose 8.0 MiB (8,388,608 B) more than tracked memory" t.txt &&
	memprov growth --json retain.trace >g.json &&
	jget g.json "=len(j[\"suspects\"])" window.steps >out &&
	printf "0\n9\n" >expect && test_cmp expect out
'

test_expect_success 'timeline points: live per kind and the last RSS sample at each instant' '
	gen tl <<-EOF &&
	header state=exited start=1000
	thread 1
	alloc ts=1100 addr=0x10 size=1000
	rss ts=1150 rss=4096000 vm=9000000
	gpu_alloc ts=1250 kind=device addr=0x7000 size=5000
	alloc ts=1300 addr=0x20 size=24
	free ts=1350 addr=0x10
	rss ts=1390 rss=5000000 vm=9000000
	mark ts=1400 serial=1 label=end
	EOF
	memprov timeline --points 4 --json tl.trace >p.json &&
	jget p.json "=[p[\"ns\"] for p in j[\"points\"]]" "=[p[\"live\"][\"heap\"] for p in j[\"points\"]]" \
		"=[p[\"live\"][\"device\"] for p in j[\"points\"]]" "=[p[\"rss\"] for p in j[\"points\"]]" \
		marks.0.ns marks.0.label >out &&
	cat >expect <<-EOF &&
	[100, 200, 300, 400]
	[1000, 1000, 1024, 24]
	[0, 0, 5000, 5000]
	[null, 4096000, 4096000, 5000000]
	400
	end
	EOF
	test_cmp expect out
'

test_expect_success 'RSS that follows a real leak is no gap' '
	{
		echo "header state=exited start=1000"
		echo "thread 1"
		i=0
		while [ $i -lt 10 ]; do
			ts=$((2000 + 1000 * i))
			echo "alloc ts=$ts addr=$((0x100000 + i * 0x200000)) size=1048576 stack=1"
			echo "rss ts=$((ts + 200)) rss=$((4194304 + 1048576 * i)) vm=1"
			echo "mark ts=$((ts + 300)) serial=$((i + 1)) label=round"
			i=$((i + 1))
		done
	} | "$TRACEGEN" -o leak.trace &&
	memprov timeline --json leak.trace >l.json &&
	jget l.json gap.flagged gap.gap_bytes gap.tracked_growth >out &&
	printf "false\n0\n8388608\n" >expect && test_cmp expect out &&
	memprov timeline leak.trace | grep -F "no gap: RSS did not rise more than tracked memory"
'

# RSS rose more than tracked memory, but not enough to flag: the text
# gives the excess and which bound it is under, never "did not rise more".
# Tracked memory +6 MiB in three blocks; RSS +6.5 MiB (excess 0.5 MiB, under
# --min-gap) and then +10 MiB (excess 4 MiB, under half of the rise).
gen_under() {
	{
		echo "header state=exited start=1000"
		echo "thread 1"
		echo "stack ts=1001 id=1 native=0x1001"
		echo "rss ts=1500 rss=4194304 vm=1"
		i=0
		while [ $i -lt 3 ]; do
			echo "alloc ts=$((2000 + 1000 * i)) addr=$((0x100000 + i * 0x400000)) size=2097152 stack=1"
			i=$((i + 1))
		done
		echo "rss ts=5000 rss=$((4194304 + $1)) vm=1"
	} | "$TRACEGEN" -o "$2"
}

test_expect_success 'an excess under --min-gap or under half of the rise: no gap, with its figure' '
	gen_under 6815744 small.trace &&
	memprov timeline --json small.trace >s.json &&
	jget s.json gap.flagged gap.gap_bytes >out && printf "false\n524288\n" >expect && test_cmp expect out &&
	memprov timeline small.trace >s.txt &&
	grep -F "no gap: RSS rose 512.0 KiB (524,288 B) more than tracked memory, under --min-gap (1.0 MiB)" s.txt &&
	gen_under 10485760 half.trace &&
	memprov timeline --json half.trace >h.json &&
	jget h.json gap.flagged gap.gap_bytes >out && printf "false\n4194304\n" >expect && test_cmp expect out &&
	memprov timeline half.trace >h.txt &&
	grep -F "no gap: RSS rose 4.0 MiB (4,194,304 B) more than tracked memory, under half of its rise (10.0 MiB)" h.txt &&
	not grep -F "did not rise" s.txt h.txt &&
	memprov timeline --min-gap 5M half.trace | grep -F "under --min-gap (5.0 MiB)"
'

# Samples with resident anonymous memory (anon=): the gap is measured on
# it. gen_retain's rounds with RSS +1 MiB a round in file pages (anonymous
# memory flat), then with anonymous memory +1 MiB a round too.
test_expect_success 'anonymous RSS in the samples: file pages are no gap, anonymous ones are' '
	gen_retain 0 files.trace &&
	memprov dump files.trace | grep -F "rss rss=4194304 vm=8388608 anon=2097152" &&
	memprov timeline --json files.trace >f.json &&
	jget f.json gap.flagged gap.basis gap.rss_growth gap.anon_start gap.anon_growth gap.gap_bytes >out &&
	printf "false\nanonymous\n8388608\n2097152\n0\n0\n" >expect && test_cmp expect out &&
	memprov timeline files.trace >f.txt &&
	grep -F "anonymous RSS (less the pages of files: libraries, the trace) 2.0 MiB -> 2.0 MiB (+0 B)" f.txt &&
	grep -Fx "no gap: anonymous RSS did not rise more than tracked memory" f.txt &&
	gen_retain 1048576 anon.trace &&
	memprov timeline --json anon.trace >a.json &&
	jget a.json gap.flagged gap.basis gap.gap_bytes >out &&
	printf "true\nanonymous\n8388608\n" >expect && test_cmp expect out &&
	memprov timeline anon.trace | grep -F "gap: anonymous RSS rose 8.0 MiB (8,388,608 B) more than tracked memory" &&
	jget a.json "=j[\"points\"][-1][\"anon\"]" "=j[\"points\"][-1][\"rss\"]" >out &&
	printf "11534336\n13631488\n" >expect && test_cmp expect out &&
	memprov timeline anon.trace | grep -E "^ +time +heap +rss +anon rss +marks$" &&
	gen_retain && memprov timeline --json retain.trace >r.json &&
	jget r.json gap.basis gap.anon_start "=sorted(set(p[\"anon\"] is None for p in j[\"points\"]))" >out &&
	printf "resident\nnull\n[true]\n" >expect && test_cmp expect out &&
	memprov timeline retain.trace >rt.txt && not grep -F "anon rss" rt.txt
'

# A program that reads a 32 MiB file through a mapping: its RSS rises by
# the file's pages, which no allocator holds; its heap stays flat. The
# whole RSS called that a gap (as numpy's libraries on a clean import).
test_expect_success 'a file read through a mapping under memprov: RSS +32 MiB, no gap' '
	cat >mapread.c <<-\EOF &&
	#include <fcntl.h>
	#include <stdlib.h>
	#include <sys/mman.h>
	#include <unistd.h>
	int main(int argc, char **argv)
	{
		int fd = open(argv[1], O_RDONLY);
		size_t len = 32u << 20, i;
		volatile unsigned char *p;
		unsigned sum = 0;

		if (fd < 0)
			return 2;
		p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED)
			return 3;
		for (i = 0; i < len; i += 4096) {
			sum += p[i];
			free(malloc(64)); /* records: RSS samples come with them */
		}
		return sum == 12345 ? 4 : 0;
	}
	EOF
	cc -O1 -o mapread mapread.c &&
	head -c 33554432 /dev/zero >data.bin &&
	env MEMPROV_OUTPUT=$TRASH/map.trace MEMPROV_RSS_INTERVAL_MS=1 LD_PRELOAD=$MEMPROV_LIB ./mapread data.bin &&
	memprov timeline --json map.trace >m.json &&
	jget m.json gap.basis gap.flagged "=j[\"gap\"][\"rss_growth\"] >= 30 << 20" \
		"=j[\"gap\"][\"anon_growth\"] < 4 << 20" >out &&
	printf "anonymous\nfalse\ntrue\ntrue\n" >expect && test_cmp expect out
'

test_expect_success 'no RSS samples: the gap is unknown' '
	gen none <<-EOF &&
	thread 1
	alloc ts=10 addr=0x10 size=10
	EOF
	memprov timeline --json none.trace >n.json &&
	jget n.json gap rss_samples >out && printf "null\n0\n" >expect && test_cmp expect out &&
	memprov timeline none.trace | grep -F "fewer than two RSS samples"
'

test_expect_success 'retention.c under memprov: the gap is flagged and growth names no site' '
	[ -x "$BIN/retention" ] || { echo "tests/bin/retention not built"; false; } &&
	timeout 60 env MEMPROV_OUTPUT=$TRASH/ret.trace MEMPROV_RSS_INTERVAL_MS=1 LD_PRELOAD=$MEMPROV_LIB \
		"$BIN/retention" 12 &&
	memprov dump ret.trace | grep -c -i rss >n && test $(cat n) -ge 2 &&
	memprov timeline --json ret.trace >r.json &&
	jget r.json gap.flagged gap.tracked_start gap.tracked_end "=j[\"gap\"][\"gap_bytes\"] >= 11 * 262144 * 3 // 4" >out &&
	printf "true\n0\n0\ntrue\n" >expect && test_cmp expect out &&
	memprov growth --json ret.trace >g.json &&
	jget g.json "=len(j[\"suspects\"])" marks >out &&
	printf "0\n12\n" >expect && test_cmp expect out
'

# Retention up to the end of __main__, then finalization gives it all back:
# the gap is measured up to the sample taken at the main-end mark, not
# after the teardown.
test_expect_success 'the gap window ends at the end of __main__, before finalization' '
	{
		echo "header state=exited start=1000"
		echo "thread 1"
		echo "stack ts=1001 id=1 native=0x1001"
		echo "rss ts=1500 rss=4194304 vm=8388608"
		echo "mark ts=1600 serial=1 label=start"
		echo "rss ts=1700 rss=4194304 vm=8388608"
		echo "alloc ts=2000 addr=0x100000 size=1048576 stack=1"
		echo "free ts=2100 addr=0x100000"
		echo "rss ts=2200 rss=12582912 vm=16777216"
		echo "mark ts=2300 serial=2 label=__main__ end flags=main-end"
		echo "rss ts=2400 rss=12582912 vm=16777216"
		echo "rss ts=9000 rss=2097152 vm=8388608"
	} | "$TRACEGEN" -o mainend.trace &&
	memprov timeline --json mainend.trace >t.json &&
	jget t.json gap.flagged gap.rss_start gap.rss_end gap.gap_bytes >out &&
	printf "true\n4194304\n12582912\n8388608\n" >expect &&
	test_cmp expect out
'

test_done
