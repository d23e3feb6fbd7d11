#!/bin/sh
# t1050-symbolize.sh - frames become function and file:line from DWARF,
# at the recorded load bias; a rebuilt module (build-id differs) is not
# trusted; a missing module gives module+0xOFF; a real run under
# libmemprov.so names the allocating lines of a -g program; source paths
# come out normalized; memprov's own frames never show; the symbol of an
# address found per span of addresses (analyzer/sym_spans.c) is libdwfl's
# own answer, name and offset, in every module tried (section bounds
# where the module is loaded: a stripped libunwind differed at 1,694
# addresses when they were pushed unbiased); a unit missing from
# .debug_aranges (Go's, in a cgo program) gets its own lines; one memprov
# reading many traces reads each module's file once (analyzer/sym_files.c),
# at each trace's own load address.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

PROG=$BIN/symprog
[ -x "$PROG" ] || test_skip "tests/bin/symprog not built"
command -v addr2line >/dev/null && command -v nm >/dev/null && command -v readelf >/dev/null ||
	test_skip "binutils (nm, addr2line, readelf) not installed"

BASE=0x555555554000
# return addresses 0x10 bytes into leak_here and into main
fn_off() { nm "$PROG" | awk -v f="$1" '$3 == f { print "0x" $1 }'; }
L=$(printf '0x%x' $((BASE + $(fn_off leak_here) + 0x10)))
M=$(printf '0x%x' $((BASE + $(fn_off main) + 0x10)))
BID=$(readelf -n "$PROG" | awk '/Build ID/ { print $3 }')
export PROG BASE L M BID

test_expect_success 'DWARF function and file:line at the load bias, as addr2line says' '
	gen sym <<-EOF &&
	header state=exited
	thread 1
	module ts=1001 base=$BASE lo=$BASE hi=$((BASE + 0x10000)) buildid=$BID path=$PROG
	module ts=1001 base=0x7f0000000000 lo=0x7f0000000000 hi=0x7f0000100000 path=/nonexistent/libfoo.so
	stack ts=1002 id=1 native=$L,$M,0x7f0000000123
	alloc ts=1010 addr=0x1 size=10 stack=1
	EOF
	memprov leaks --json sym.trace >l.json 2>err &&
	jget l.json sites.0.frames.0.function sites.0.frames.0.line sites.0.frames.1.function \
		sites.0.frames.1.line sites.0.frames.2.function sites.0.frames.2.file sites.0.frames.0.module >out &&
	for a in $L $M; do
		addr2line -f -e "$PROG" $(printf "0x%x" $((a - BASE - 1))) | sed "s/.*://; s/ .*//"
	done >a2l &&
	sed -n "1p;3p" a2l >e1 && sed -n "2p;4p" a2l >e2 &&
	printf "%s\n%s\n%s\n%s\nlibfoo.so+0x123\nnull\n%s\n" "$(sed -n 1p e1)" "$(sed -n 1p e2)" \
		"$(sed -n 2p e1)" "$(sed -n 2p e2)" "$PROG" >expect &&
	test_cmp expect out &&
	sed -n 1p out >f && echo leak_here >expect && test_cmp expect f &&
	! test -s err
'

test_expect_success 'a module whose build-id changed is not symbolized, with one warning' '
	gen old <<-EOF &&
	thread 1
	module ts=1001 base=$BASE lo=$BASE hi=$((BASE + 0x10000)) buildid=00112233 path=$PROG
	stack ts=1002 id=1 native=$L,$M
	alloc ts=1010 addr=0x1 size=10 stack=1
	EOF
	memprov leaks --json old.trace >l.json 2>err &&
	echo "memprov: warning: '\''$PROG'\'' changed since the trace was written: build-id differs; its frames are not symbolized" >expect &&
	test_cmp expect err &&
	jget l.json sites.0.frames.0.function sites.0.frames.0.file >out &&
	printf "symprog+0x%x\nnull\n" $(( $(fn_off leak_here) + 0x10 )) >expect &&
	test_cmp expect out
'

test_expect_success 'a module path that is not a regular file is left alone' '
	gen fifo <<-EOF &&
	thread 1
	module ts=1001 base=0x1000 lo=0x1000 hi=0x2000 path=/dev/zero
	stack ts=1002 id=1 native=0x1010
	alloc ts=1010 addr=0x1 size=10 stack=1
	EOF
	timeout 10 "$MEMPROV_CLI" leaks --json fifo.trace >l.json &&
	jget l.json sites.0.frames.0.function >out &&
	echo "zero+0x10" >expect && test_cmp expect out
'

test_expect_success 'memprov run on a -g program names leak_here symprog.c:11 and main :22' '
	test -f "$MEMPROV_LIB" || { echo "skip: $MEMPROV_LIB not built"; exit 0; } &&
	timeout 60 "$MEMPROV_CLI" run -o run.trace -- "$PROG" 2>err &&
	grep -Fx "memprov: trace written to run.trace" err &&
	memprov leaks --json run.trace >l.json &&
	jget l.json totals.heap.blocks totals.heap.bytes sites.0.blocks \
		sites.0.frames.0.function sites.0.frames.0.line \
		sites.0.frames.1.function sites.0.frames.1.line "=len(j[\"sites\"][0][\"frames\"])" >out &&
	printf "3\n3000\n3\nleak_here\n11\nmain\n22\n2\n" >expect &&
	test_cmp expect out &&
	jget l.json sites.0.frames.0.file | grep "symprog\.c$"
'

test_expect_success 'source paths normalized: glibc'"'"'s ./locale/./locale/x.c is locale/x.c' '
	test -f "$MEMPROV_LIB" || { echo "skip: $MEMPROV_LIB not built"; exit 0; } &&
	bid=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk "/Build ID/ { print \$3 }") &&
	dbg=/usr/lib/debug/.build-id/$(echo "$bid" | cut -c1-2)/$(echo "$bid" | cut -c3-).debug &&
	{ test -f "$dbg" || { echo "skip: no debug file for libc (libc6-dbg)"; exit 0; }; } &&
	timeout 60 "$MEMPROV_CLI" run -o echo.trace -- /bin/echo hi >/dev/null 2>&1 &&
	memprov leaks --json --native --all echo.trace >e.json &&
	/usr/bin/python3 - <<-\PY
	import json
	files = [f["file"] for s in json.load(open("e.json"))["sites"] for f in s["frames"]
	         if f["file"] and "libc.so" in (f["module"] or "")]
	print(files)
	assert "locale/setlocale.c" in files, files
	for f in files:
	    parts = f.split("/")
	    assert f[0] != "/" and "." not in parts and "" not in parts, f
	    assert all(p == ".." for p in parts[:parts.index("..") + 1]) if ".." in parts else True, f
	PY
'

test_expect_success 'memprov'"'"'s own frames appear nowhere, even with --native' '
	test -f run.trace || { echo "skip: no run.trace"; exit 0; } &&
	memprov leaks --native --all run.trace >out &&
	memprov leaks --json --native --all run.trace >out.json &&
	! grep -i "memprov\.so\|main_wrapper\|interpose/" out out.json
'

test_expect_success 'the symbol of an address per span of addresses: libdwfl'"'"'s answer in every module' '
	test -x "$BIN/test-sym-spans" &&
	files="/lib/x86_64-linux-gnu/libc.so.6 $MEMPROV_CLI $TOP/interpose/libmemprov-syms.so $PROG" &&
	for f in /usr/bin/python3.11 /usr/bin/node /usr/bin/perl /usr/bin/gdb \
		 /usr/lib/llvm-14/lib/libunwind.so.1.0 /usr/lib/x86_64-linux-gnu/libattr.so.1; do
		test -e "$f" && files="$files $(readlink -f "$f")"
	done &&
	"$BIN/test-sym-spans" $files >spans.out &&
	cat spans.out &&
	test $(grep -c ": [0-9]* addresses, [0-9]* named, 0 differ" spans.out) = $(echo $files | wc -w) &&
	! grep -q ": [0-9]* addresses, 0 named" spans.out
'

# `check` of a shell loop's 303 traces spent 7.4 s, most of it inflating
# libc's debug sections once a trace; 0.28 s when read once.
test_expect_success 'many traces: each file read once, each trace at its own load address' '
	for base in 0x555555554000 0x563412340000 0x7f1234560000; do
		bid=$BID && test $base = 0x563412340000 && bid=00112233
		gen b$base <<-EOF || return 1
		header state=exited
		thread 1
		module ts=1001 base=$base lo=$base hi=$((base + 0x10000)) buildid=$bid path=$PROG
		stack ts=1002 id=1 native=$(printf "0x%x" $((base + $(fn_off leak_here) + 0x10))),$(printf "0x%x" $((base + $(fn_off main) + 0x10)))
		alloc ts=1010 addr=0x1 size=10 stack=1
		EOF
	done &&
	files="b0x555555554000.trace b0x563412340000.trace b0x7f1234560000.trace" &&
	test_status 1 memprov check --reachable $files >check.out 2>check.err &&
	cat check.out check.err &&
	ml=$(addr2line -e "$PROG" $(printf "0x%x" $(($(fn_off main) + 0xf))) | sed "s/.*://; s/ .*//") &&
	test $(grep -c "^      leak_here .*symprog.c:11$" check.out) = 2 &&
	test $(grep -c "^      main .*symprog.c:$ml$" check.out) = 2 &&
	grep -x "      symprog+0x[0-9a-f]*" check.out &&
	test $(grep -c "build-id differs" check.err) = 1 &&
	memprov leaks --jobs 1 $files >leaks.out &&
	grep -x "      leak_here .*symprog.c:11" leaks.out &&
	if command -v strace >/dev/null; then
		test_status 1 strace -y -e trace=mmap -o mmap.st "$MEMPROV_CLI" check --reachable $files >/dev/null 2>&1
		n=$(grep -c "<$PROG>" mmap.st) && echo "$PROG mapped $n times" && test "$n" = 1
	fi
'

test_expect_success 'units that .debug_aranges leaves out still get their own lines' '
	# tests/bin/split: part.c between main.c and tail.c, last.c after
	# them, both linked without aranges, as a cgo program'"'"'s Go code (Go
	# writes none): both had no line before (libdwfl took main.c'"'"'s unit
	# for part.c; in a cgo program every Go frame read runtime/cgo'"'"'s
	# gcc_mmap.c:37 so)
	test -x "$BIN/split" &&
	MEMPROV_OUTPUT=split.trace LD_PRELOAD="$MEMPROV_LIB" "$BIN/split" &&
	memprov leaks split.trace >split.out &&
	cat split.out &&
	for u in part last; do
		line=$(grep -n "the line t1050 expects in $u.c" "$TOP/tests/progs/split/$u.c" | cut -d: -f1) &&
		grep -x "      ${u}_alloc .*/tests/progs/split/$u.c:$line" split.out || exit 1
	done &&
	grep -x "      main_alloc .*/tests/progs/split/main.c:[0-9]*" split.out &&
	grep -x "      tail_alloc .*/tests/progs/split/tail.c:[0-9]*" split.out
'

test_done
