#!/bin/sh
# t2160-damaged-trace.sh - truncated and corrupted real traces: a cut in
# the header is a clear error (nonzero exit); a cut inside the chunks says
# "trace cut at offset N" and still reports (exit 0), while the gate
# gives no verdict on it (exit 2: what was freed after the cut would count
# as live; it passed or failed on the part before); a broken record says
# "corrupt record at offset N" and the rest is reported; random damage
# never crashes the analyzer (no signal, no sanitizer report).
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
walk() { /usr/bin/python3 "$TOP/tests/progs/trace_walk.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

# analyze REPORT TRACE: run `memprov REPORT --json TRACE` bounded, leave
# stdout in REPORT.json and stderr in REPORT.err, return its status, and
# fail on a signal or a sanitizer report
analyze() {
	rc=0
	timeout 60 "$MEMPROV_CLI" "$1" --json "$2" >"$1.json" 2>"$1.err" || rc=$?
	cat "$1.err" >&2
	if [ $rc -ge 124 ] || grep -q "Sanitizer\|runtime error" "$1.err"; then
		echo "crashed or hung: status $rc on $2" >&2
		return 125
	fi
	return $rc
}

# flip TRACE OFFSET BYTE... -> writes the bytes (decimal) at OFFSET in place
poke() {
	/usr/bin/python3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2]))
f.write(bytes(int(b) for b in sys.argv[3:]))' "$@"
}

test_expect_success 'a real trace with many chunks' '
	memprov run -o full.trace -- "$BIN/churn" 2 5000 >/dev/null 2>&1 &&
	walk full.trace >records &&
	test $(wc -l <records) -gt 5000 &&
	walk full.trace --header &&
	analyze stats full.trace &&
	jget --check stats.json cut=false damaged=false cut_at=null &&
	jget stats.json events >full-events &&
	cp stats.json full-stats.json
'

for off in 0 9 100 2000 4095; do
	export off
	test_expect_success "cut inside the header at $off: clear error, nonzero exit" '
		cp full.trace cut.trace && truncate -s $off cut.trace &&
		rc=0 && analyze leaks cut.trace || rc=$? &&
		test $rc != 125 && test $rc != 0 &&
		test -s leaks.err && ! test -s leaks.json &&
		rc=0 && analyze stats cut.trace || rc=$? &&
		test $rc != 125 && test $rc != 0 && test -s stats.err
	'
done

test_expect_success 'a trace that is not one: clear error, nonzero exit' '
	head -c 8192 /dev/zero >zero.trace &&
	rc=0 && analyze leaks zero.trace || rc=$? &&
	test $rc != 125 && test $rc != 0 && test -s leaks.err &&
	cp full.trace newer.trace && poke newer.trace 8 99 0 0 0 &&
	rc=0 && analyze leaks newer.trace || rc=$? &&
	test $rc != 125 && test $rc != 0 && grep -i "version" leaks.err
'

# The file is reserved a step ahead: the data ends after next_chunk
# blocks. Cuts inside it: within the first chunk's records, at a segment
# (so a chunk) boundary, inside a record in the middle, inside the last
# record of the last chunk in the file.
data_end=$(walk "$TRASH/full.trace" --header 2>/dev/null |
	sed -n 's/.*chunk_size=\([0-9]*\) .*next_chunk=\([0-9]*\) .*/\1 \2/p' |
	awk '{print 4096 + $1 * $2}')
nrec=$(wc -l <"$TRASH/records" 2>/dev/null || echo 0)
mid_cut=$(awk -v n="$nrec" 'NR == int(n / 2) {print $1 + 1}' "$TRASH/records" 2>/dev/null)
last_cut=$(awk 'END {print $1 + 1}' "$TRASH/records" 2>/dev/null)
for off in 4228 69632 $mid_cut $last_cut; do
	export off
	test_expect_success "cut inside the chunks at $off: says so, partial report, exit 0" '
		cp full.trace cut.trace && truncate -s $off cut.trace &&
		analyze stats cut.trace &&
		grep "trace cut at offset $off\\b" stats.err &&
		jget --check stats.json cut=true cut_at=$off &&
		jget stats.json events >ev &&
		test $(cat ev) -gt 0 && test $(cat ev) -lt $(cat full-events) &&
		analyze leaks cut.trace &&
		grep "trace cut at offset $off\\b" leaks.err &&
		jget leaks.json totals.heap.blocks &&
		memprov leaks cut.trace >leaks.txt 2>/dev/null &&
		st=0 && memprov check cut.trace >chk.out 2>&1 || st=$? &&
		cat chk.out && test $st = 2 &&
		grep -q "^memprov check: cut.trace: the trace is cut at offset $off (the file is shorter than what was written to it" chk.out &&
		st=0 && memprov check --json cut.trace >chk.json 2>/dev/null || st=$? &&
		test $st = 2 && jget --check chk.json status=error
	'
done

export data_end
test_expect_success 'the unused reserved tail removed: not a cut, same report' '
	cp full.trace short.trace && truncate -s $data_end short.trace &&
	analyze stats short.trace &&
	! grep "cut" stats.err &&
	jget --check stats.json cut=false events=$(cat full-events) &&
	st=0 && memprov check short.trace >chk.out 2>&1 || st=$? &&
	cat chk.out && test $st != 2 && ! grep -q "cut" chk.out
'

# an ALLOC record in the middle of the trace (its first byte, its
# length); damage to its tag (reserved bit, type 0) or to the varint after
# it (longer than 10 bytes)
mid=$(awk '$2 == 1 { a[n++] = $1 } END { print a[int(n / 2)] }' "$TRASH/records" 2>/dev/null)
midlen=$(awk '$2 == 1 { a[n++] = $3 } END { print a[int(n / 2)] }' "$TRASH/records" 2>/dev/null)
export mid midlen
for how in "tag 0:0" "tag reserved bit:129" "varint:1 255 255 255 255 255 255 255 255 255 255 255"; do
	what=${how%%:*} bytes=${how#*:}
	export what bytes
	test_expect_success "corrupt record ($what) at a known offset: named, rest reported" '
		test -n "$mid" &&
		cp full.trace bad.trace &&
		poke bad.trace $mid $bytes &&
		analyze stats bad.trace &&
		grep "corrupt record at offset $mid\\b" stats.err &&
		jget --check stats.json damaged=true &&
		test $(jget stats.json events) -gt 1000 &&
		analyze leaks bad.trace &&
		grep "corrupt record at offset $mid\\b" leaks.err &&
		jget --check leaks.json damaged=true
	'
done

# the same record rewritten, same length, as a framed record of a type
# this memprov does not know (60: tag, ts delta 0, length, filler)
test_expect_success 'an unknown record type is skipped, not an error' '
	cp full.trace unknown.trace &&
	poke unknown.trace $mid 60 0 $((midlen - 3)) $(seq 1 $((midlen - 3)) | sed "s/.*/0/") &&
	analyze stats unknown.trace &&
	! grep "corrupt record" stats.err &&
	test $(jget stats.json events) -gt 1000
'

test_expect_success 'random damage anywhere: never a crash, a hang or a sanitizer report' '
	i=0 &&
	while [ $i -lt 24 ]; do
		cp full.trace fuzz.trace &&
		/usr/bin/python3 -c "import random, sys
r = random.Random(int(sys.argv[2])); f = open(sys.argv[1], \"r+b\")
size = f.seek(0, 2)
lo = 8 if int(sys.argv[2]) % 6 == 0 else 4096
for _ in range(64):
    f.seek(r.randrange(lo, size)); f.write(bytes([r.randrange(256)]))" fuzz.trace $i &&
		for r in leaks stats; do
			rc=0 && analyze $r fuzz.trace 2>/dev/null || rc=$?
			test $rc != 125 || { echo "seed $i: $r failed"; cat $r.err; exit 1; }
		done
		i=$((i + 1))
	done
'

test_done
