#!/bin/sh
# t2300-accuracy-corpus.sh - the accuracy corpus (tests/corpus/): C and C++
# programs at -O0 and -O2 (inlining), operator new, new[] and aligned new,
# a stripped program, a library with a .symtab and no DWARF. For each, the
# report lines (API, function, file:line, bytes, blocks) are those the
# program's source gives (lines found by their @markers), the same at -O0
# and -O2, and the same as valgrind's stacks for the same run.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"
for p in corpus-inline-O0 corpus-inline-O2 corpus-cxxnew-O0 corpus-cxxnew-O2 \
	corpus-stripped corpus-stripped.full corpus-nodwarf libcorpus-nodwarf.so corpus-tsd; do
	[ -e "$BIN/$p" ] || test_skip "tests/bin/$p not built"
done

SRC=$TOP/tests/corpus
VGCMP=$SRC/vgcompare.py
# at FILE MARKER: the line of FILE marked /* @MARKER */
at() { grep -n "/\* @$2 \*/" "$SRC/$1" | cut -d: -f1; }
# run NAME: trace NAME.trace of tests/bin/NAME (no reachability scan: the
# site list stays one list, biggest first, as these checks read it)
run() { MEMPROV_REACH=0 timeout 60 "$MEMPROV_CLI" run -o "$1.trace" -- "$BIN/$1" 2>"$1.err"; }
# sites TRACE [OPTIONS]: the site lines of `leaks`, sources by base name
sites() {
	t=$1 && shift &&
	memprov leaks "$@" "$t" >"$t.out" &&
	sed -n '/^[0-9]* sites* of the program.s own:$/,$p' "$t.out" | sed 1d | sed "s|$SRC/||"
}
export SRC VGCMP

I=inline.c
cat >"$TRASH/inline.expect" <<EOF
  #1 heap malloc: 1 block, 100 B
      make $I:$(at $I make)
      main $I:$(at $I main-make)
  #2 heap xmalloc: 2 blocks, 80 B
      fill $I:$(at $I fill)
      main $I:$(at $I main-fill)
  #3 heap strdup: 3 blocks, 36 B
      add $I:$(at $I add)
      main $I:$(at $I main-add)
EOF

test_expect_success 'C at -O0: sites name the API, the function and its line' '
	run corpus-inline-O0 &&
	sites corpus-inline-O0.trace >out &&
	cat >expect <<-EOF &&
	  #1 heap malloc: 1 block, 100 B
	      make $I:$(at $I make)
	      main $I:$(at $I main-make)
	  #2 heap malloc: 2 blocks, 80 B
	      xmalloc $I:$(at $I xmalloc-inner)
	      fill $I:$(at $I fill)
	      main $I:$(at $I main-fill)
	  #3 heap strdup: 3 blocks, 36 B
	      add $I:$(at $I add)
	      main $I:$(at $I main-add)
	EOF
	test_cmp expect out
'

test_expect_success 'C at -O2 (add and make inlined): the same stacks, inlined frames named' '
	run corpus-inline-O2 &&
	nm "$BIN/corpus-inline-O0" | awk "\$3 == \"add\"" | grep add &&
	! nm "$BIN/corpus-inline-O2" | awk "\$3 == \"add\"" | grep add &&
	sites corpus-inline-O2.trace --alloc-fn xmalloc >out &&
	test_cmp inline.expect out &&
	sites corpus-inline-O0.trace --alloc-fn xmalloc >out0 &&
	test_cmp out0 out
'

test_expect_success 'inlined frames in JSON: add is inlined into main at -O2, not at -O0' '
	memprov leaks --json corpus-inline-O2.trace >o2.json &&
	memprov leaks --json corpus-inline-O0.trace >o0.json &&
	/usr/bin/python3 - <<-\PY
	import json
	for name, inl in (("o2.json", True), ("o0.json", False)):
	    s = [s for s in json.load(open(name))["sites"] if s["api"] == "strdup"][0]
	    f = s["frames"]
	    assert [x["function"] for x in f] == ["add", "main"], f
	    assert f[0]["inlined"] is inl and f[1]["inlined"] is False, f
	    assert s["func"] == "malloc", s
	    if inl:
	        assert f[0]["address"] == f[1]["address"], f
	PY
'

C=cxxnew.cc
cat >"$TRASH/cxx.expect" <<EOF
  #1 heap operator new[]: 1 block, 1,000 B
      make_buffer $C:$(at $C make_buffer)
      main $C:$(at $C main-buffer)
  #2 heap operator new: 1 block, 128 B
      make_wide $C:$(at $C make_wide)
      main $C:$(at $C main-wide)
  #3 heap operator new: 1 block, 4 B
      make_int $C:$(at $C make_int)
      main $C:$(at $C main-int)
EOF

# C++ names carry parameters when they come from a linkage name (-O0)
# and not when an inlined frame has only its DW_AT_name (-O2), as valgrind
test_expect_success 'C++ at -O0 and -O2: operator new, new[] and aligned new, deletes not shown' '
	for o in O0 O2; do
		run corpus-cxxnew-$o &&
		sites corpus-cxxnew-$o.trace | sed "s/(.*) / /" >out-$o &&
		test_cmp cxx.expect out-$o || exit 1
	done &&
	grep "make_buffer(unsigned long) " corpus-cxxnew-O0.trace.out
'

test_expect_success 'a stripped program: module+offset inside the leaking function, no memprov frame' '
	run corpus-stripped &&
	memprov leaks --native --all corpus-stripped.trace >out &&
	memprov leaks --json --native --all corpus-stripped.trace >out.json &&
	cat out &&
	! grep -i "memprov\.so\|main_wrapper\|init\.c\|hooks_libc\|__libc_start" out &&
	! grep -i "libmemprov\|main_wrapper" out.json &&
	# 5 blocks of 24 B, each site innermost at one return address in leak_here
	/usr/bin/python3 - "$BIN/corpus-stripped.full" <<-\PY
	import json, subprocess, sys
	nm = subprocess.run(["nm", "-S", sys.argv[1]], capture_output=True, text=True).stdout
	start, size = [(int(l.split()[0], 16), int(l.split()[1], 16)) for l in nm.splitlines()
	               if l.endswith(" leak_here")][0]
	sites = json.load(open("out.json"))["sites"]
	assert sum(s["blocks"] for s in sites) == 5 and sum(s["bytes"] for s in sites) == 120, sites
	for s in sites:
	    fn = s["frames"][0]["function"]
	    mod, off = fn.split("+0x")
	    assert mod == "corpus-stripped", fn
	    assert start < int(off, 16) <= start + size, (hex(start), fn)
	    assert len(s["frames"]) == 2, s["frames"]
	PY
'

test_expect_success 'a library without DWARF: function+0xOFF (module) from its .symtab' '
	run corpus-nodwarf &&
	lib=$BIN/libcorpus-nodwarf.so &&
	start=$(nm "$lib" | awk "\$3 == \"nd_leak\" { print \$1 }") &&
	ret=$(objdump -d --no-show-raw-insn "$lib" |
		awk "/<nd_leak>:/ { f = 1 } f && /call.*<malloc@plt>/ { getline; print \$1; exit }" | tr -d :) &&
	off=$(printf "0x%x" $((0x$ret - 0x$start))) &&
	sites corpus-nodwarf.trace >out &&
	cat >expect <<-EOF &&
	  #1 heap malloc: 2 blocks, 128 B
	      nd_leak+$off (libcorpus-nodwarf.so)
	      main nodwarf.c:$(at nodwarf.c main-nd)
	EOF
	test_cmp expect out
'

test_expect_success 'inlined frames in folded stacks, the HTML flame graph and the gate' '
	memprov peak --folded corpus-inline-O2.trace >folded &&
	grep -Fx "main ($I:$(at $I main-add));add ($I:$(at $I add)) 36" folded &&
	memprov html -o page.html corpus-inline-O2.trace &&
	grep -F "[\"add\",\"$SRC/$I\",$(at $I add),\"n\"," page.html &&
	st=0 && memprov check --annotations corpus-inline-O2.trace >annot || st=$? &&
	test $st = 1 &&
	grep -F "::error file=$SRC/$I,line=$(at $I add),title=" annot >a &&
	grep -F "heap strdup: 36 B in 3 blocks live at exit in add at $SRC/$I:$(at $I add)" a
'

test_expect_success 'alloc:NAME in a suppression file: the gate names the caller' '
	echo "alloc:xmal*" >s.supp &&
	st=0 && memprov check --suppressions s.supp corpus-inline-O2.trace >out || st=$? &&
	test $st = 1 &&
	grep -F "heap xmalloc: 80 B in 2 blocks live at exit in fill at $SRC/$I:$(at $I fill)" out &&
	st=0 && memprov check --alloc-fn "f(" corpus-inline-O2.trace 2>err || st=$? &&
	test $st = 2 && grep "alloc-fn wants a function name" err
'

test_expect_success 'glibc frames: the function name, never its internal __GI_ alias' '
	run corpus-tsd &&
	memprov leaks --json corpus-tsd.trace >tsd.json &&
	/usr/bin/python3 - tsd.json "$(at tsd.c keydtor)" >tsd.out <<-\EOF &&
	import json, sys
	line = int(sys.argv[2])
	for s in json.load(open(sys.argv[1]))["sites"]:
	    f = s["frames"]
	    if f and f[0]["function"] == "keydtor" and f[0]["line"] == line:
	        for x in f:
	            print(x["function"], (x["file"] or "-").split("/")[-1])
	EOF
	cat tsd.out &&
	test "$(sed -n 1p tsd.out)" = "keydtor tsd.c" &&
	! grep -q "__GI_" tsd.out &&
	if grep -q "nptl_deallocate_tsd.c" tsd.out; then
		test "$(sed -n 2p tsd.out | cut -d" " -f1)" = __nptl_deallocate_tsd &&
		test "$(sed -n 3p tsd.out | cut -d" " -f1)" = __nptl_deallocate_tsd
	else
		echo "libc without debug symbols: its frames not checked"
	fi
'

command -v valgrind >/dev/null || test_skip "valgrind not installed"

# vg NAME MODULE: valgrind's stacks and memprov's for NAME, in one form
vg() {
	timeout 300 valgrind --leak-check=full --show-leak-kinds=all --run-libc-freeres=no \
		--log-file="$1.vg" "$BIN/$1" &&
	"$VGCMP" valgrind "$1.vg" "$2" >"$1.vgs" &&
	memprov leaks --json --all "$1.trace" >"$1.json" &&
	"$VGCMP" memprov "$1.json" "$2" >"$1.mps" &&
	cat "$1.vgs" && test -s "$1.vgs" && test_cmp "$1.vgs" "$1.mps"
}

for p in corpus-inline-O0:$I corpus-inline-O2:$I corpus-cxxnew-O0:$C corpus-cxxnew-O2:$C \
	corpus-stripped:corpus-stripped corpus-nodwarf:libcorpus-nodwarf.so; do
	export p
	test_expect_success "valgrind names the same stacks, bytes and blocks: ${p%%:*}" '
		vg "${p%%:*}" "${p#*:}"
	'
done

test_done
