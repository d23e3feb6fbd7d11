#!/bin/sh
# t2310-accuracy-preload.sh - the preload object's side of the accuracy
# corpus (tests/corpus/, issue 14): libraries opened by relative path are
# symbolized wherever the analyzer runs; a library opened with
# RTLD_DEEPBIND has its allocations and its frees seen (no phantom block);
# a malloc replacement's own operator new and delete are seen;
# a process that dies of a signal says which; the program's heap and its
# signal dispositions are what they are without memprov.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"
for p in corpus-dlrel libcorpus-dlrel.so libcorpus-deep.so corpus-deaths libcorpus-fakealloc.so \
	corpus-cxxreplace libcorpus-cachealloc.so corpus-droprep corpus-forkrep corpus-mallocx \
	corpus-mallocx-libc; do
	[ -e "$BIN/$p" ] || test_skip "tests/bin/$p not built"
done
SRC=$TOP/tests/corpus
at() { grep -n "/\* @$2 \*/" "$SRC/$1" | cut -d: -f1; }
# traced NAME PROG ARGS...: tests/bin/corpus-PROG run from tests/bin into $TRASH/NAME.trace
traced() {
	n=$1 p=$2
	shift 2
	(cd "$BIN" && timeout 60 env LD_PRELOAD="$MEMPROV_LIB" \
		MEMPROV_OUTPUT="$TRASH/$n.trace" ./corpus-"$p" "$@")
}

test_expect_success 'dlopen("./lib.so"): frames named by function and line from any directory' '
	traced dlrel dlrel >dl.out 2>dl.err && test ! -s dl.err &&
	mkdir -p elsewhere && (cd elsewhere && memprov leaks ../dlrel.trace) >leaks.txt &&
	line=$(at dlrel_lib.c keep) &&
	grep -A1 "heap calloc: 1 block, 333 B" leaks.txt >site &&
	grep "keep .*dlrel_lib.c:$line" site &&
	! grep "libcorpus-dlrel.so+0x" leaks.txt
'

test_expect_success 'RTLD_DEEPBIND: the library'"'"'s frees are seen, only its kept block is live' '
	memprov leaks --json dlrel.trace >dl.json &&
	jget --check dl.json "=sorted(s[\"bytes\"] for s in j[\"sites\"] if any((f[\"file\"] or \"\").endswith(\"dlrel_lib.c\") for f in s[\"frames\"]))==[333, 444]" &&
	memprov stats --json dlrel.trace >st.json &&
	mallocs=$(jget st.json functions.malloc.calls) && frees=$(jget st.json functions.free.calls) &&
	echo "malloc $mallocs, free $frees" &&
	test "$frees" -ge 400
'

test_expect_success 'a malloc replacement with its own operator new, preloaded after memprov: C++ allocations recorded, named as libstdc++'"'"'s' '
	# its new and delete allocate without malloc: every C++ allocation
	# went past memprov, and the program below reported nothing live (a
	# helper'"'"'s sweep with libjemalloc.so.2). One new[] throws bad_alloc
	# through memprov'"'"'s wrapper: what follows is recorded all the same
	C=cxxreplace.cc &&
	(cd "$BIN" && timeout 60 env LD_PRELOAD="$MEMPROV_LIB:$BIN/libcorpus-fakealloc.so" \
		MEMPROV_OUTPUT="$TRASH/rep.trace" MEMPROV_REACH=0 ./corpus-cxxreplace) >rep.out 2>rep.err &&
	test "$(cat rep.out)" = "bad_alloc caught" && test ! -s rep.err &&
	memprov leaks rep.trace >rep.txt && cat rep.txt &&
	cat >rep.expect <<-EOF &&
	heap operator new[]: 1 block, 555 B|main $SRC/$C:$(at $C mapped)
	heap operator new[]: 1 block, 333 B|worker() $SRC/$C:$(at $C worker)
	heap operator new[]: 1 block, 100 B|main $SRC/$C:$(at $C after-throw)
	heap operator new[]: 1 block, 77 B|main $SRC/$C:$(at $C nothrow)
	heap operator new: 1 block, 32 B|main $SRC/$C:$(at $C text)
	EOF
	grep -A1 "^  #[0-9]" rep.txt | grep -v "^--" | paste -d"|" - - |
		sed "s/^  #[0-9]* //; s/| */|/" | grep -v ", 301 B|\|^mmap " >rep.sites &&
	test_cmp rep.expect rep.sites &&
	# the string'"'"'s body: libstdc++'"'"'s own call, bound to the replacement
	grep -q "^  #[0-9]* heap [a-z ]*: 1 block, 301 B$" rep.txt &&
	memprov stats --json rep.trace >rep.json &&
	# the vector and its buffer: made and deleted, each one alloc and one free
	test "$(jget rep.json functions.free.calls)" -ge 2 &&
	# libstdc++'"'"'s own calls (std::thread'"'"'s state, the exception) go to the
	# replacement too: their deletes were recorded, their news not
	memprov stats rep.trace | grep -x "unmatched frees: 0 (frees of memory allocated before tracing started)"
'

test_expect_success 'a malloc replacement'"'"'s own mappings are its heap: not blocks, not roots: dropped blocks lost' '
	# cachealloc maps its arena, its metadata (a cache of the regions it
	# handed out, as jemalloc'"'"'s thread cache) and a 2 MiB request with
	# mmap. Recorded as blocks and scanned as roots, they were 66 MiB of
	# mmap blocks live at exit, the 2 MiB block counted twice ("possibly
	# lost" as a mapping), and the 3 dropped blocks still reachable
	# through the cache: the gate passed (jemalloc: 3 of 3 the same)
	(cd "$BIN" && timeout 60 env LD_PRELOAD="$MEMPROV_LIB:$BIN/libcorpus-cachealloc.so" \
		MEMPROV_OUTPUT="$TRASH/drop.trace" ./corpus-droprep) >drop.out 2>drop.err &&
	test "$(cat drop.out)" = "droprep ok" && test ! -s drop.err &&
	memprov stats --json drop.trace >drop.json &&
	# the mappings recorded: the program'"'"'s own page, and the page the
	# replacement mapped for it outside an allocation call (a library
	# that defines malloc to forward it and maps memory for its caller
	# had that page left out of the roots: its 400 B block "lost")
	jget --check drop.json kinds.mmap.allocs=2 kinds.mmap.live_bytes=8192 \
		kinds.heap.live_blocks=8 reach.status=done \
		reach.classes.definitely_lost.blocks=3 reach.classes.definitely_lost.bytes=300 \
		reach.classes.indirectly_lost.blocks=0 reach.classes.possibly_lost.blocks=0 \
		reach.classes.still_reachable.blocks=7 &&
	# the blocks kept only in those pages are reachable: the pages are blocks the program reaches
	test_status 1 memprov check drop.trace >drop.check &&
	cat drop.check &&
	grep "^    #1 heap malloc: 300 B in 3 blocks definitely lost at exit in main at .*droprep.c:$(at droprep.c drop)$" drop.check &&
	! grep "^    #2" drop.check
'

test_expect_success 'jemalloc'"'"'s own API (mallocx, rallocx, xallocx, sdallocx, dallocx), called or looked up with dlsym, recorded: a block kept in mallocx memory is reachable' '
	# Folly calls mallocx where jemalloc is loaded: its blocks went
	# unrecorded, and inside the replacement'"'"'s mappings (not roots) the
	# block kept only there was "definitely lost"
	(cd "$BIN" && timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/mx.trace" \
		./corpus-mallocx) >mx.out &&
	test "$(cat mx.out)" = "mallocx ok" &&
	memprov stats --json mx.trace >mx.json &&
	# malloc: 5 mallocx (one looked up with dlsym), the 2 kept mallocs,
	# stdout'"'"'s buffer; rallocx and xallocx as realloc, sdallocx and
	# dallocx as free
	jget --check mx.json functions.malloc.calls=8 functions.realloc.calls=2 \
		functions.free.calls=2 unmatched_frees=0 kinds.heap.live_blocks=6 \
		kinds.heap.live_bytes=$((64 + 100 + 48 + 64 + 120 + 4096)) \
		reach.classes.definitely_lost.blocks=1 reach.classes.definitely_lost.bytes=48 \
		reach.classes.indirectly_lost.blocks=0 reach.classes.still_reachable.blocks=5 &&
	test_status 1 memprov check mx.trace >mx.check &&
	grep "^    #1 heap malloc: 48 B in 1 block definitely lost at exit in main at .*mallocx.c:$(at mallocx.c dropped)$" mx.check &&
	! grep "^    #2" mx.check
'

test_expect_success 'jemalloc'"'"'s API where libc'"'"'s malloc comes first: its blocks recorded, its mappings not, a dropped one lost' '
	# (jemalloc loaded by a library, after libc.) Its mappings, made from
	# its code inside a wrapped call, were recorded as the program'"'"'s: 64
	# MiB of mmap blocks holding the mallocx blocks, counted twice, and
	# the dropped one reachable through them
	(cd "$BIN" && timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/mxl.trace" \
		./corpus-mallocx-libc) >mxl.out &&
	test "$(cat mxl.out)" = "mallocx ok" &&
	memprov stats --json mxl.trace >mxl.json &&
	jget --check mxl.json functions.malloc.calls=8 functions.realloc.calls=2 \
		functions.free.calls=2 kinds.mmap.allocs=0 kinds.heap.live_blocks=6 \
		reach.classes.definitely_lost.blocks=1 reach.classes.definitely_lost.bytes=48 \
		reach.classes.still_reachable.blocks=5
'

test_expect_success 'forks while a malloc replacement maps memory under the lock it holds across fork: no hang' '
	# memprov held its table'"'"'s lock across fork, taken before the
	# replacement'"'"'s: the thread mapping under the replacement'"'"'s lock
	# waited for memprov'"'"'s, the fork for the replacement'"'"'s: 3 runs of 3
	# hung (tcmalloc stalled forks for up to 49 s)
	(cd "$BIN" && timeout 120 env LD_PRELOAD="$MEMPROV_LIB:$BIN/libcorpus-cachealloc.so" \
		MEMPROV_OUTPUT="$TRASH/fr.%p.trace" ./corpus-forkrep) >fr.out &&
	test "$(cat fr.out)" = "forkrep 50" &&
	test "$(ls "$TRASH"/fr.*.trace | wc -l)" = 51
'

test_expect_success 'the heap before main is the program'"'"'s alone: mallinfo2 as bare' '
	"$BIN/corpus-deaths" mallinfo >bare &&
	traced mi deaths mallinfo >under && test_cmp bare under
'

test_expect_success 'sigaction reports the default actions the program left' '
	"$BIN/corpus-deaths" query >bare &&
	traced qu deaths query >under && test_cmp bare under
'

for m in dfree:ABRT:6 segv:SEGV:11 term:TERM:15; do
	mode=${m%%:*} rest=${m#*:} name=${rest%%:*} num=${rest#*:}
	test_expect_success "death by SIG$name: same status as bare, the trace says so" '
		{ "$BIN/corpus-deaths" '$mode' 2>/dev/null; echo $? >bare; } &&
		{ traced d'$mode' deaths '$mode' 2>/dev/null; echo $? >under; } &&
		test_cmp bare under && test "$(cat under)" = $((128 + '$num')) &&
		memprov leaks d'$mode'.trace >l.txt &&
		grep "^ended: killed by SIG'$name' (signal '$num')" l.txt &&
		memprov leaks --json d'$mode'.trace >l.json &&
		jget --check l.json state=killed signal='$num' &&
		line=$(at deaths.c keep) && grep "main .*deaths.c:$line" l.txt
	'
done

test_expect_success 'a handled SIGTERM is not a death: exit 5 as bare, state exited' '
	{ "$BIN/corpus-deaths" handled; echo $? >bare; } &&
	{ traced dh deaths handled; echo $? >under; } && test_cmp bare under &&
	memprov stats --json dh.trace >s.json && jget --check s.json state=exited exit_status=5
'

test_done
