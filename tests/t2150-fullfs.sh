#!/bin/sh
# t2150-fullfs.sh - a trace written to a tiny filesystem that fills up:
# tracing stops with exactly one "memprov:" warning, the program's own
# output and exit status are unchanged, and the trace stays readable
# (state "stopped"). Two sizes: 512 KiB holds a few chunks; 4 KiB holds
# the header and not one chunk, so the trace is a header alone, which must
# still read as a stopped trace with no events. Both are tmpfs: the runs
# set MEMPROV_RAMFS_OK=1 (no warning for that), but the one that checks
# that warning.
# a run killed by the suite's timeout may have left its mount behind
umount "$(dirname "$0")/out/t2150-fullfs/fs" 2>/dev/null
umount "$(dirname "$0")/out/t2150-fullfs/fs4" 2>/dev/null
umount "$(dirname "$0")/out/t2150-fullfs/ext4" 2>/dev/null
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

FS=$TRASH/fs FS4=$TRASH/fs4
mkdir -p "$FS" "$FS4"
if ! mount -t tmpfs -o size=512k tmpfs "$FS" 2>"$TRASH/mount.err"; then
	test_skip "cannot mount a 512 KiB tmpfs here: $(cat "$TRASH/mount.err")"
fi
if ! mount -t tmpfs -o size=4k tmpfs "$FS4" 2>"$TRASH/mount.err"; then
	umount "$FS"
	test_skip "cannot mount a 4 KiB tmpfs here: $(cat "$TRASH/mount.err")"
fi
export FS FS4 MEMPROV_RAMFS_OK=1

test_expect_success 'bare run: known output, status 3' '
	st=0 && "$BIN/fill" >bare.out 2>bare.err || st=$? &&
	test $st = 3 && test ! -s bare.err &&
	head -n 1 bare.out | grep "^fill done checksum="
'

test_expect_success 'traced to a full filesystem: same output and status, one warning' '
	st=0 &&
	timeout 120 env MEMPROV_OUTPUT=$FS/%p.trace LD_PRELOAD=$MEMPROV_LIB \
		"$BIN/fill" >out 2>err || st=$? &&
	cat err &&
	test $st = 3 &&
	test_cmp bare.out out &&
	test $(grep -c "^memprov:" err) = 1 &&
	test $(wc -l <err) = 1 &&
	ls -l "$FS" && test $(ls "$FS" | wc -l) = 1
'

test_expect_success 'the cut-short trace is readable: state stopped' '
	t=$(ls "$FS"/*.trace) &&
	timeout 60 "$MEMPROV_CLI" stats --json "$t" >stats.json &&
	jget --check stats.json state=stopped damaged=false unmatched_frees=0 &&
	jget --check stats.json "=j[\"events\"]>1000==true" &&
	timeout 60 "$MEMPROV_CLI" leaks --json "$t" >leaks.json &&
	jget --check leaks.json state=stopped &&
	timeout 60 "$MEMPROV_CLI" leaks "$t" >leaks.txt
'

test_expect_success 'memprov run to the full filesystem keeps the status too' '
	rm -f "$FS"/* &&
	st=0 && timeout 120 "$MEMPROV_CLI" run -o "$FS/run.trace" -- "$BIN/fill" >out2 2>err2 ||
		st=$? &&
	cat err2 &&
	test $st = 3 && test_cmp bare.out out2 &&
	test $(grep -v "trace written to" err2 | grep -c "^memprov:") = 1
'

test_expect_success '4 KiB: same output and status, one warning' '
	st=0 &&
	timeout 120 env MEMPROV_OUTPUT=$FS4/%p.trace LD_PRELOAD=$MEMPROV_LIB \
		"$BIN/fill" >out3 2>err3 || st=$? &&
	cat err3 &&
	test $st = 3 && test_cmp bare.out out3 &&
	test $(wc -l <err3) = 1 && grep "^memprov:" err3
'

test_expect_success '4 KiB: a header-only trace reads as stopped, no events, exit 0' '
	t=$(ls "$FS4"/*.trace) &&
	timeout 60 "$MEMPROV_CLI" stats --json "$t" >stats3.json &&
	jget --check stats3.json state=stopped damaged=false &&
	timeout 60 "$MEMPROV_CLI" leaks --json "$t" >leaks3.json &&
	jget --check leaks3.json state=stopped totals.heap.blocks=0
'

test_expect_success 'a trace on tmpfs: one warning with a directory on disk, and stats says so' '
	rm -f "$FS"/* &&
	env -u MEMPROV_RAMFS_OK MEMPROV_OUTPUT=$FS/small.trace LD_PRELOAD=$MEMPROV_LIB \
		/bin/echo hi >out4 2>err4 &&
	cat err4 && echo hi >expect && test_cmp expect out4 &&
	test $(wc -l <err4) = 1 &&
	grep "^memprov: the trace $FS/small.trace is on a RAM-backed file system (tmpfs): .*MEMPROV_OUTPUT" err4 &&
	"$MEMPROV_CLI" stats "$FS/small.trace" >st.txt &&
	grep "^trace: written to a RAM-backed file system (tmpfs)" st.txt &&
	"$MEMPROV_CLI" stats --json "$FS/small.trace" >st.json &&
	jget --check st.json ram_backed=true &&
	MEMPROV_OUTPUT=disk.trace LD_PRELOAD=$MEMPROV_LIB /bin/echo hi >/dev/null 2>err5 &&
	test ! -s err5 &&
	"$MEMPROV_CLI" stats --json disk.trace >st5.json &&
	jget --check st5.json ram_backed=false
'

umount "$FS" || umount -l "$FS"
umount "$FS4" || umount -l "$FS4"

# ext4 reserves blocks as they are written: there each thread writes its
# own chunk's zeros (trace_file.c, chunk_space), four threads at once
# here, and the full disk must stop tracing the same way, with no SIGBUS
# from a chunk whose space was never reserved.
EXT=$TRASH/ext4
if command -v mkfs.ext4 >/dev/null && truncate -s 4M "$TRASH/ext4.img" &&
   mkfs.ext4 -q -F "$TRASH/ext4.img" 2>/dev/null && mkdir -p "$EXT" &&
   mount -o loop "$TRASH/ext4.img" "$EXT" 2>"$TRASH/mount.err"; then
test_expect_success 'a full ext4 filesystem, four threads: same status, one warning, a whole trace' '
	st=0 &&
	timeout 120 env MEMPROV_OUTPUT=$EXT/%p.trace LD_PRELOAD=$MEMPROV_LIB \
		"$BIN/churn" 4 400000 >ext.out 2>ext.err || st=$? &&
	cat ext.err && test $st = 0 &&
	grep -q "^live_blocks=" ext.out &&
	test $(wc -l <ext.err) = 1 && grep -q "^memprov: cannot reserve trace space (disk or quota full)" ext.err &&
	t=$(ls "$EXT"/*.trace) &&
	timeout 60 "$MEMPROV_CLI" stats --json "$t" >ext.json &&
	jget --check ext.json state=stopped damaged=false unmatched_frees=0 threads=5 &&
	jget --check ext.json "=j[\"events\"]>50000==true"
'
umount "$EXT" || umount -l "$EXT"
else
	echo "skip - $TEST_NAME: cannot mount a 4 MiB ext4 image here (a loop device?)"
	test_skipped=$((test_skipped + 1))
fi
test_done
