#!/bin/sh
# t9400-hostile-paths.sh - a trace whose module records (and header exe)
# name hostile or missing paths: /dev/zero, a FIFO, /proc/self/mem, a
# directory, a 10 GB sparse file, a symlink to a FIFO, ../../ paths, an
# empty path, names that do not exist. The analyzer finishes (bounded),
# reports the frames as module+0xOFF, and opens nothing but regular files
# big enough to be ELF (strace shows which); a FIFO given as the trace
# itself is refused at once instead of blocking in open().
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"
command -v strace >/dev/null || test_skip "strace missing"

mkfifo "$TRASH/fifo"
mkdir "$TRASH/dir"
truncate -s 10G "$TRASH/sparse"
ln -s "$TRASH/fifo" "$TRASH/link-to-fifo"

test_expect_success 'trace naming hostile module paths' '
	i=0 && {
	echo "header state=exited exe=$TRASH/fifo" &&
	echo "thread 1" &&
	for p in /dev/zero "$TRASH/fifo" /proc/self/mem "$TRASH/dir" "$TRASH/sparse" \
		"$TRASH/link-to-fifo" ../../etc/passwd "/../../../$TRASH/fifo" /nonexistent/lib.so \
		/dev/tty /dev/stdin; do
		i=$((i + 1)) &&
		echo "module ts=$((10 + i)) base=$((i * 0x100000)) lo=$((i * 0x100000)) hi=$((i * 0x100000 + 0x10000)) path=$p" || exit 1
	done &&
	echo "module ts=30 base=0x5000000 lo=0x5000000 hi=0x5010000 path=" &&
	echo "stack ts=40 id=7 native=0x100010,0x200020,0x300030,0x400040,0x500050,0x600060,0x700070,0x800080,0x900090,0xa000a0,0xb000b0,0x5000100" &&
	echo "alloc ts=50 addr=0x1000 size=77 stack=7"
	} >hostile.txt &&
	gen hostile <hostile.txt
'

test_expect_success 'leaks finishes, frames as module+offset, exit 0' '
	# LeakSanitizer cannot run under ptrace (make test SANITIZE=address)
	timeout 60 env ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=open,openat \
		-o strace.log "$MEMPROV_CLI" leaks hostile.trace >out 2>err </dev/null &&
	cat out err &&
	grep "heap malloc: 1 block, 77 B" out &&
	grep -c "+0x10$\|+0x20$\|+0x30$" out
'

test_expect_success 'nothing opened but regular files (no device, FIFO, directory, /proc)' '
	grep -v ENOENT strace.log | grep -o "\"[^\"]*\"" | tr -d "\"" | sort -u >opened &&
	cat opened &&
	! grep -E "^/dev/|fifo|/proc/self/mem|/dir$" opened &&
	! grep "passwd" opened
'

test_expect_success 'stats and dump on the same trace: bounded, exit 0' '
	timeout 60 "$MEMPROV_CLI" stats hostile.trace >/dev/null </dev/null &&
	timeout 60 "$MEMPROV_CLI" dump hostile.trace >/dev/null </dev/null
'

test_expect_success 'a FIFO given as the trace: refused at once' '
	st=0 && timeout 20 "$MEMPROV_CLI" leaks fifo 2>err || st=$? &&
	cat err && test $st = 1 && grep "is not a regular file" err &&
	st=0 && timeout 20 "$MEMPROV_CLI" stats /dev/zero 2>err || st=$? &&
	test $st = 1 && st=0 && timeout 20 "$MEMPROV_CLI" leaks dir 2>err || st=$? && test $st = 1
'

test_done
