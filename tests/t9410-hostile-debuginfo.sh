#!/bin/sh
# t9410-hostile-debuginfo.sh - the symbolizer's search for separate debug
# files never opens what is not a regular file. Beside modules named in a
# real trace (a stripped program, a library whose .gnu_debuglink names
# nd.debug): FIFOs where the debug files would be (NAME.debug, the
# debuglink's name) and symlinks to /dev/zero in their .debug
# directories. leaks, growth, peak, html, check and diff finish (bounded
# by timeout; libdw's own search blocked forever in open() on the FIFO)
# and strace shows that none of those paths was opened.
. "$(dirname "$0")/test-lib.sh"
command -v strace >/dev/null || test_skip "strace missing"
command -v objcopy >/dev/null || test_skip "objcopy (binutils) missing"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"
for p in corpus-stripped corpus-nodwarf libcorpus-nodwarf.so; do
	[ -e "$BIN/$p" ] || test_skip "tests/bin/$p not built"
done

M=$TRASH/mod
mkdir -p "$M/.debug"
cp "$BIN/corpus-stripped" "$BIN/corpus-nodwarf" "$M/"
# the library gets a debuglink to nd.debug, which then becomes a FIFO
objcopy --only-keep-debug "$BIN/libcorpus-nodwarf.so" "$M/nd.debug"
(cd "$M" && objcopy --add-gnu-debuglink=nd.debug "$BIN/libcorpus-nodwarf.so" libcorpus-nodwarf.so)
rm -f "$M/nd.debug"
mkfifo "$M/nd.debug" "$M/corpus-stripped.debug" "$M/libcorpus-nodwarf.so.debug"
ln -s /dev/zero "$M/.debug/nd.debug"
ln -s /dev/zero "$M/.debug/corpus-stripped.debug"
export M

test_expect_success 'traces of the programs beside the hostile debug files' '
	readelf -p .gnu_debuglink "$M/libcorpus-nodwarf.so" | grep nd.debug &&
	timeout 60 "$MEMPROV_CLI" run -o s.trace -- "$M/corpus-stripped" &&
	timeout 60 "$MEMPROV_CLI" run -o n.trace -- "$M/corpus-nodwarf" &&
	memprov dump n.trace | grep "path=\"$M/libcorpus-nodwarf.so\""
'

# report ARGS...: the analyzer under strace, bounded; its status in status
report() {
	status=0
	timeout 30 env ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=open,openat \
		-o strace.log "$MEMPROV_CLI" "$@" >out 2>err </dev/null || status=$?
	cat strace.log >>all-opens.log
}

for cmd in leaks growth peak html check diff; do
	export cmd
	test_expect_success "$cmd finishes and symbolizes what it can" '
		for t in s n; do
			case $cmd in
			html) report html -o page.html $t.trace ;;
			diff) report diff $t.trace $t.trace ;;
			check) report check --reachable $t.trace ;; # they keep their blocks reachable
			*) report $cmd $t.trace ;;
			esac &&
			cat err &&
			case $cmd in check) test $status = 1 ;; *) test $status = 0 ;; esac || exit 1
		done &&
		case $cmd in
		leaks) report leaks n.trace && grep -E "nd_leak\+0x[0-9a-f]+ \(libcorpus-nodwarf.so\)" out &&
			report leaks s.trace && grep "corpus-stripped+0x" out ;;
		esac
	'
done

test_expect_success 'no FIFO, device or symlink to one was opened' '
	grep -c "libcorpus-nodwarf.so\"" all-opens.log &&
	! grep -E "nd\.debug|corpus-stripped\.debug|libcorpus-nodwarf\.so\.debug|/dev/zero" all-opens.log
'

test_expect_success 'a good debug file beside the module is still found (build-id checked)' '
	mkdir good && cp "$BIN/corpus-stripped.full" good/x.full &&
	strip --strip-all -o good/x good/x.full &&
	objcopy --only-keep-debug good/x.full good/x.debug &&
	timeout 60 "$MEMPROV_CLI" run -o g.trace -- "$TRASH/good/x" &&
	memprov leaks g.trace >out && cat out &&
	grep "leak_here .*stripped.c:" out &&
	: a debug file of another build is refused &&
	cp "$BIN/corpus-inline-O0" good/x.debug &&
	memprov leaks g.trace >out && ! grep "stripped.c:" out && grep "x+0x" out
'

test_done
