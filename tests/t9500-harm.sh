#!/bin/sh
# t9500-harm: memprov never harms the program it watches (issue 19).
# Each case runs tests/bin/harm (tests/progs/harm.c) bare and under the
# preload object: the program's files, descriptors, output and exit status
# must be those of the bare run, nothing may hang (every run is bounded by
# timeout), and what memprov could not record is counted, never lost.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/harm" ||
	test_skip "interpose/libmemprov.so, analyzer/memprov or tests/bin/harm not built"

# traced NAME CMD...: run CMD under memprov into NAME.trace, bounded
traced() {
	name=$1
	shift
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/$name.trace" "$@"
}

test_expect_success 'the program closes every descriptor and opens its own file: the file is its own' '
	"$BIN/harm" closefd bare.dat >bare.out &&
	traced cl "$BIN/harm" closefd user.dat >cl.out 2>cl.err &&
	test_cmp bare.out cl.out && test ! -s cl.err &&
	test "$(wc -c <user.dat)" = 9 &&
	memprov leaks --json cl.trace >cl.json &&
	jget --check cl.json state=exited "=sum(s[\"blocks\"] for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"keep_blocks\")==1001"
'

test_expect_success 'the program dup2s its file over every descriptor: the file is untouched, the trace whole' '
	traced du "$BIN/harm" dup2over user2.dat >du.out 2>du.err &&
	test "$(cat du.out)" = "size_after=9" && test ! -s du.err &&
	memprov leaks --json du.trace >du.json &&
	jget --check du.json state=exited "=sum(s[\"blocks\"] for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"keep_blocks\")==1001"
'

test_expect_success 'memprov'"'"'s descriptors act as not open to the program: close, dup, fcntl fail, dup2 onto one is the program'"'"'s, close_range keeps them' '
	# fcntl(F_GETFD) said they were open, close closed them (the trace
	# was reopened by path), and a dup2 onto one was undone by programs
	# that save and restore what they find open (bash)
	"$BIN/harm" hidden >hd-bare.out 2>hd-bare.err &&
	test "$(cat hd-bare.err)" = "hidden=0 kept_open=0" &&
	traced hd "$BIN/harm" hidden >hd.out 2>hd.err ||
	{ cat hd.out; return 1; }
	cat hd.err &&
	test_cmp hd-bare.out hd.out &&
	n=$(sed -n "s/^hidden=\([0-9]*\) kept_open=\([0-9]*\)$/\1/p" hd.err) &&
	test "$n" -ge 1 && grep -q "^hidden=$n kept_open=$n$" hd.err &&
	memprov leaks --json hd.trace >hd.json &&
	jget --check hd.json state=exited "=sum(s[\"blocks\"] for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"keep_blocks\")==1001"
'

test_expect_success 'a listing of /proc/self/fd or /dev/fd leaves memprov'"'"'s descriptors out: ls, find, Python by path and by descriptor' '
	cat >ls-fd.sh <<-\EOF &&
	ls /proc/self/fd
	ls /dev/fd/
	find /proc/self/fd -maxdepth 1 | sed "s/[0-9][0-9]*\/fd/PID\/fd/"
	/usr/bin/python3 -c "import os; print(sorted(map(int, os.listdir(\"/proc/self/fd\"))))"
	/usr/bin/python3 -c "import os; d = os.open(\"/proc/self/fd\", os.O_RDONLY); print(sorted(map(int, os.listdir(d))))"
	EOF
	sh ls-fd.sh >lsfd-bare.out &&
	traced lsfd sh ls-fd.sh >lsfd.out 2>lsfd.err &&
	test_cmp lsfd-bare.out lsfd.out && test ! -s lsfd.err &&
	# the traced processes did hold descriptors of memprov'"'"'s
	memprov stats --json lsfd.trace >lsfd.json && jget --check lsfd.json state=exited
'

test_expect_success 'under ulimit -n 16 the numbers a program opens are those of the bare run' '
	# memprov took 4 and 5 (3 up): the program'"'"'s files came out as 3, 6, 7, 8
	cat >opens.py <<-\EOF &&
	import os
	print([os.open("/dev/null", os.O_RDONLY) for _ in range(4)])
	EOF
	(ulimit -n 16 && /usr/bin/python3 opens.py) >opens-bare.out &&
	cat opens-bare.out &&
	(ulimit -n 16 && traced op /usr/bin/python3 opens.py) >opens.out &&
	test_cmp opens-bare.out opens.out &&
	memprov stats --json op.trace >op.json &&
	jget --check op.json state=exited exit_status=0 damaged=false
'

test_expect_success 'bash: exec 896>FILE where memprov has its trace (ulimit -n 1024) writes into FILE, not the trace' '
	# bash found 896 open, saved it and put it back after the
	# redirection: "hello" went into the trace, FILE stayed empty
	script="readlink /proc/\$\$/fd/896 >fd896.txt; exec 896>bout.txt; echo hello >&896; exec 896>&-; echo done" &&
	(ulimit -n 1024 && bash -c "$script") >bash-bare.out &&
	test "$(cat bout.txt)" = hello && rm bout.txt &&
	(ulimit -n 1024 && traced bs bash -c "$script") >bash.out 2>bash.err &&
	test_cmp bash-bare.out bash.out && test ! -s bash.err &&
	test "$(cat bout.txt)" = hello &&
	grep -q "bs.trace$" fd896.txt &&
	memprov stats --json bs.trace >bs.json &&
	jget --check bs.json state=exited exit_status=0 damaged=false
'

test_expect_success 'bash: > /dev/fd/896 and /proc/self/fd/896 where memprov has its trace fail as bare, no SIGBUS' '
	# opened by path, 896 was the trace: the redirection truncated it and
	# memprov'"'"'s next record died of SIGBUS (status 135); bare, ENOENT
	script="echo hi >/dev/fd/896; echo \$?; echo hi >/proc/self/fd/896; echo \$?; echo hi >/proc/\$\$/fd/896; echo \$?; cat /dev/fd/896; echo \$?" &&
	(ulimit -n 1024 && bash -c "$script") >dfd-bare.out 2>dfd-bare.err &&
	(ulimit -n 1024 && traced dfd bash -c "$script") >dfd.out 2>dfd.err &&
	test_cmp dfd-bare.out dfd.out && printf "1\n1\n1\n1\n" >expect && test_cmp expect dfd.out &&
	sed "s/[0-9][0-9]*\/fd/PID\/fd/" dfd-bare.err >a && sed "s/[0-9][0-9]*\/fd/PID\/fd/" dfd.err >b &&
	test_cmp a b && test "$(grep -c "No such file or directory" dfd.err)" = 4 &&
	memprov stats --json dfd.trace >dfd.json &&
	jget --check dfd.json state=exited exit_status=0 damaged=false
'

test_expect_success 'a path the kernel cannot read fails with EFAULT as bare; errno at main and after fork as bare' '
	# the open hooks read such a path in place and died of SIGSEGV; and
	# main found errno ENOENT, left by memprov'"'"'s search for a trace name
	"$BIN/harm" badpath >bp-bare.out &&
	traced bp "$BIN/harm" badpath >bp.out 2>bp.err &&
	test_cmp bp-bare.out bp.out && test ! -s bp.err &&
	test "$(grep -c " -1 EFAULT$" bp.out)" = 7 &&
	"$BIN/harm" errno >en-bare.out &&
	traced en "$BIN/harm" errno >en.out 2>en.err &&
	test_cmp en-bare.out en.out && test ! -s en.err &&
	printf "main 0\nchild 0\nparent 0\n" >expect && sort expect >a && sort en.out >b && test_cmp a b
'

test_expect_success 'a library constructor that runs before memprov'"'"'s: fopen, freopen, open, stat, dup, fcntl, sigaction as bare' '
	# fopen passed libc'"'"'s pointer before it was resolved: NULL, and
	# fopen failed with ENOSYS; libselinux'"'"'s (every coreutils program)
	# then read /proc/mounts instead of /proc/filesystems
	cat >early.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <errno.h>
	#include <fcntl.h>
	#include <signal.h>
	#include <stdio.h>
	#include <string.h>
	#include <sys/stat.h>
	#include <unistd.h>
	static void show(const char *what, long r) { printf("%s %s %s\n", what, r < 0 ? "fail" : "ok", r < 0 ? strerror(errno) : ""); }
	__attribute__((constructor)) static void early(void)
	{
		struct stat st;
		struct sigaction sa;
		FILE *f = fopen("/proc/filesystems", "re"), *g = fopen64("early.c", "r");
		int fd;
		show("fopen", f ? 0 : -1);
		show("fopen64", g ? 0 : -1);
		show("freopen", g && freopen("early.c", "r", g) ? 0 : -1);
		show("open", fd = open("early.c", O_RDONLY));
		show("openat", openat(AT_FDCWD, "early.c", O_RDONLY));
		show("creat", creat("early.out", 0600));
		show("truncate", truncate("early.out", 10));
		show("stat", stat("early.c", &st));
		show("fstatat", fstatat(AT_FDCWD, "early.c", &st, 0));
		show("dup", dup(fd));
		show("dup2", dup2(fd, 100));
		show("fcntl", fcntl(fd, F_DUPFD_CLOEXEC, 200));
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_IGN;
		show("sigaction", sigaction(SIGUSR1, &sa, NULL));
		show("signal", signal(SIGUSR2, SIG_IGN) == SIG_ERR ? -1 : 0);
		fflush(stdout);
	}
	EOF
	cc -shared -fPIC -o libearly.so early.c &&
	printf "int main(void) { return 0; }\n" >earlymain.c &&
	cc -o earlymain earlymain.c -Wl,--no-as-needed -L. -learly -Wl,-rpath,"$PWD" &&
	./earlymain >early-bare.out &&
	traced early ./earlymain >early.out 2>early.err &&
	test_cmp early-bare.out early.out && test ! -s early.err &&
	test "$(grep -c " ok $" early.out)" = 14 &&
	memprov stats --json early.trace >early.json &&
	jget --check early.json state=exited exit_status=0 damaged=false
'

test_expect_success 'sigaction reads back what the kernel kept: no SIGKILL or SIGSTOP in the mask, libc'"'"'s restorer, no SA_SIGINFO after SA_RESETHAND' '
	# memprov returned its copy of the program'"'"'s action as passed in
	# (SIGKILL, SIGSTOP in the mask, no SA_RESTORER) and, once an
	# SA_RESETHAND handler had run, flags with its own SA_SIGINFO
	cat >rb.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <signal.h>
	#include <stdio.h>
	#include <string.h>
	static void h(int s) { (void)s; }
	static void show(const char *tag, int sig)
	{
		struct sigaction o;
		int i;
		memset(&o, 0xaa, sizeof(o));
		sigaction(sig, NULL, &o);
		printf("%s %s flags=%#x restorer=%d mask:", tag, o.sa_handler == SIG_DFL ? "DFL" : o.sa_handler == h ? "h" : "other",
		       (unsigned)o.sa_flags, o.sa_restorer != NULL);
		for (i = 1; i < 32; i++)
			if (sigismember(&o.sa_mask, i))
				printf(" %d", i);
		printf("\n");
	}
	int main(void)
	{
		struct sigaction a, o;
		memset(&a, 0, sizeof(a));
		a.sa_handler = SIG_DFL;
		sigfillset(&a.sa_mask);
		a.sa_flags = SA_RESTART | SA_NODEFER;
		sigaction(SIGTERM, &a, &o);
		show("term-default", SIGTERM);
		a.sa_handler = h;
		sigemptyset(&a.sa_mask);
		sigaddset(&a.sa_mask, SIGUSR2);
		sigaddset(&a.sa_mask, SIGKILL);
		a.sa_flags = SA_RESETHAND;
		sigaction(SIGUSR1, &a, NULL);
		show("usr1-handler", SIGUSR1);
		raise(SIGUSR1);
		show("usr1-after-reset", SIGUSR1);
		show("hup-untouched", SIGHUP);
		/* sigaction(2)'"'"'s probe: a flag the kernel does not know comes back cleared */
		a.sa_handler = h;
		a.sa_flags = 0x400;
		sigaction(SIGUSR2, &a, NULL);
		show("usr2-unsupported-flag", SIGUSR2);
		a.sa_handler = SIG_DFL;
		sigaction(SIGTERM, &a, NULL);
		show("term-unsupported-flag", SIGTERM);
		/* SIG_IGN with SA_SIGINFO is ignored, not a handler at address 1 */
		a.sa_handler = SIG_IGN;
		a.sa_flags = SA_SIGINFO;
		sigaction(SIGUSR1, &a, NULL);
		raise(SIGUSR1);
		show("usr1-ignored", SIGUSR1);
		return 0;
	}
	EOF
	cc -o rb rb.c && ./rb >rb-bare.out && traced rb ./rb >rb.out 2>rb.err &&
	test_cmp rb-bare.out rb.out && test ! -s rb.err &&
	grep -q "^term-default DFL flags=0x54000000 restorer=1 mask: 1 2 3 4 5 6 7 8 10 " rb.out &&
	grep -q "^usr1-ignored other flags=0x4000004 " rb.out
'

test_expect_success 'a program that defines getenv: memprov never calls it (bash does define one)' '
	# memprov read its settings through getenv, and so ran the
	# program'"'"'s own definition 20 times before main
	cat >ge.c <<-\EOF &&
	#include <stdio.h>
	#include <string.h>
	extern char **environ;
	static int in_main, before;
	char *getenv(const char *name)
	{
		size_t n = strlen(name);
		char **e;
		if (!in_main)
			before++;
		for (e = environ; *e; e++)
			if (!strncmp(*e, name, n) && (*e)[n] == 61)
				return *e + n + 1;
		return NULL;
	}
	int main(void)
	{
		in_main = 1;
		printf("getenv calls before main: %d\n", before);
		return 0;
	}
	EOF
	cc -o ge ge.c && ./ge >ge-bare.out && traced ge ./ge >ge.out 2>ge.err &&
	test_cmp ge-bare.out ge.out && test ! -s ge.err &&
	memprov stats --json ge.trace >ge.json && jget --check ge.json state=exited exit_status=0
'

test_expect_success 'a forked child keeps the descriptors the program put where memprov had its own' '
	traced fp "$BIN/harm" forkpipe >fp.out 2>fp.err &&
	test "$(cat fp.out)" = "child read 9 bytes" && test ! -s fp.err &&
	test "$(ls fp*.trace | wc -l)" = 2
'

test_expect_success 'stdout and stderr closed: the trace does not take them, writes fail with EBADF' '
	"$BIN/harm" stdio >&- 2>&- && echo bare ok &&
	traced st "$BIN/harm" stdio >&- 2>&- &&
	memprov stats --json st.trace >st.json &&
	jget --check st.json state=exited exit_status=0 damaged=false
'

test_expect_success 'the same with every stack taken by libunwind: its memory check takes no descriptor' '
	MEMPROV_FAST_UNWIND=0 traced stu "$BIN/harm" stdio >&- 2>&- &&
	memprov leaks --all --json stu.trace >stu.json &&
	jget --check stu.json state=exited exit_status=0 "=sum(s[\"blocks\"] for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"keep_blocks\")==1001"
'

for lim in 4096 300000 1048576; do
test_expect_success "file-size limit $lim B: the program goes on, tracing stops with one warning" '
	"$BIN/harm" fsize '$lim' >bare.out &&
	traced fs'$lim' "$BIN/harm" fsize '$lim' >fs.out 2>fs.err &&
	test_cmp bare.out fs.out &&
	test "$(grep -c "file-size limit" fs.err)" = 1 && test "$(wc -l <fs.err)" = 1 &&
	memprov stats --json fs'$lim'.trace >fs.json &&
	jget --check fs.json state=stopped
'
done

test_expect_success 'stderr closed at start, the program'"'"'s file given number 2: no warning of memprov'"'"'s in it' '
	# the trace reaches the file-size limit and memprov warns: the line
	# went into the program'"'"'s own file
	"$BIN/harm" stderrfile sf-bare.txt 2>&- &&
	traced sf "$BIN/harm" stderrfile sf.txt 2>&- &&
	test_cmp sf-bare.txt sf.txt && test "$(wc -l <sf.txt)" = 2 &&
	memprov stats --json sf.trace >sf.json && jget --check sf.json state=stopped
'

test_expect_success 'no descriptor left for the trace (RLIMIT_NOFILE 4 at start): one warning, no empty trace' '
	# the trace was created, then its descriptor could not be moved above
	# the program'"'"'s: a 0-byte file stayed, which every reader called damaged
	prlimit --nofile=4 ls -d / >nd-bare.out &&
	mkdir -p "$TRASH/nd" &&
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/nd/t.%p.trace" \
		prlimit --nofile=4 ls -d / >nd.out 2>nd.err &&
	test_cmp nd-bare.out nd.out &&
	grep -q "^memprov: cannot keep a descriptor for the trace" nd.err &&
	test "$(find "$TRASH/nd" -name "*.trace" -size 0 | wc -l)" = 0 &&
	test "$(ls "$TRASH/nd" | wc -l)" = 1
'

test_expect_success 'file-size limit set before the program starts: no SIGXFSZ, same output' '
	traced pl prlimit --fsize=4096 "$BIN/harm" fsize 4096 >pl.out 2>pl.err &&
	test "$(cat pl.out)" = done
'

test_expect_success 'deferred pthread_cancel of 8 allocating threads, 10 runs: none hangs' '
	for i in 1 2 3 4 5 6 7 8 9 10; do
		rm -f ca.trace &&
		traced ca "$BIN/harm" cancel 8 >ca.out || return 1
		test "$(cat ca.out)" = "joined 8" || return 1
	done
'

test_expect_success 'a SIGCHLD handler runs for the program'"'"'s child only, not in the scan'"'"'s helper at exit' '
	# the helper that stops the threads had a copy of the handlers and
	# got SIGCHLD at each stop: the handler ran again at exit (3 s more
	# when its waitpid took the stops), and Go'"'"'s crashed it
	"$BIN/harm" sigchld >sc-bare.out 2>sc-bare.err &&
	test "$(cat sc-bare.err)" = "sigchld handler" &&
	for i in 1 2 3; do
		traced sc$i "$BIN/harm" sigchld >sc$i.out 2>sc$i.err &&
		test_cmp sc-bare.out sc$i.out && test_cmp sc-bare.err sc$i.err &&
		memprov stats sc$i.trace >sc$i.stats &&
		grep "reachability at exit (2 of 2 threads stopped)" sc$i.stats || return 1
	done
'

test_expect_success 'a handler that maps memory while threads allocate: every mapping recorded' '
	traced sm "$BIN/harm" sigmmap 0 >sm.out 2>sm.err && test ! -s sm.err &&
	kept=$(sed -n "s/^kept=//p" sm.out) && test "$kept" -ge 3000 &&
	memprov stats --json sm.trace >sm.json &&
	jget --check sm.json kinds.mmap.live_blocks=$kept skipped_events=0
'

test_expect_success 'a handler installed by a raw system call: what memprov missed is counted exactly' '
	traced sr "$BIN/harm" sigmmap 1 >sr.out 2>sr.err && test ! -s sr.err &&
	kept=$(sed -n "s/^kept=//p" sr.out) &&
	memprov stats --json sr.trace >sr.json &&
	live=$(jget sr.json kinds.mmap.live_blocks) &&
	skipped=$(jget sr.json "=j[\"skipped\"].get(\"mmap\", 0)") &&
	echo "kept $kept, recorded $live, counted as skipped $skipped" &&
	test $((live + skipped)) = "$kept" &&
	memprov leaks sr.trace >sr.leaks 2>sr.leaks.err &&
	if test "$skipped" -gt 0; then
		grep "$skipped events* could not be recorded" sr.leaks &&
		grep "could not be recorded" sr.leaks.err
	fi
'

test_expect_success 'siglongjmp out of a handler 2000 times, inside the hooks too: recording goes on' '
	traced sj "$BIN/harm" sigjmp >sj.out 2>sj.err && test ! -s sj.err &&
	maps=$(sed -n "s/.* maps=//p" sj.out) && test "$maps" -gt 1000 &&
	memprov leaks --json sj.trace >sj.json &&
	jget --check sj.json "=sum(s[\"blocks\"] for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"keep_blocks\")==1000" &&
	memprov stats --json sj.trace >sjs.json &&
	mmaps=$(jget sjs.json functions.mmap.calls) &&
	echo "program mapped $maps times to the end of the loop; memprov saw $mmaps mmaps" &&
	test "$mmaps" -ge "$maps"
'

test_expect_success 'a vfork child that resets the handlers leaves the parent its own' '
	traced vs "$BIN/harm" vforksig >vs.out 2>vs.err && test ! -s vs.err &&
	test "$(cat vs.out)" = "hup=1 usr1=1 child-saw-dfl=1"
'

test_expect_success 'Python: a signal from a subprocess reaches the handler (its vfork child resets handlers)' '
	cat >sighup.py <<-\EOF &&
	import os, signal, subprocess, sys, time
	got = []
	signal.signal(signal.SIGHUP, lambda s, f: got.append(s))
	for i in range(3):
	    subprocess.run([sys.executable, "-c", "import os, signal; os.kill(%d, signal.SIGHUP)" % os.getpid()])
	    deadline = time.monotonic() + 10
	    while len(got) <= i and time.monotonic() < deadline:
	        time.sleep(0.01)
	print(len(got))
	EOF
	traced py /usr/bin/python3 sighup.py >py.out &&
	test "$(cat py.out)" = 3
'

test_expect_success 'a crash handler on a small alternate stack that aborts: the process dies of SIGABRT' '
	{ "$BIN/harm" crashabort 2>crash-bare.err; bare=$?; } &&
	{ traced crash "$BIN/harm" crashabort 2>crash.err; st=$?; } &&
	echo "bare $bare traced $st" &&
	test "$bare" = 134 && test "$st" = 134 &&
	test "$(head -1 crash.err)" = overflow &&
	memprov stats crash.trace >crash.stats &&
	grep -q "^ended: killed or still running" crash.stats
'

test_expect_success 'quick_exit: the trace says exited with the status' '
	test_status 3 traced qe "$BIN/harm" quickexit &&
	memprov leaks --json qe.trace >qe.json &&
	jget --check qe.json state=exited exit_status=3 totals.heap.bytes=77
'

test_expect_success 'every function of the preload object with aligned stack stores aligns its stack' '
	# read from libmemprov-syms.so (the stripped object names no
	# function), whose code is the preloaded one, byte for byte
	"$TOP/scripts/check-realign.sh" "$TOP/interpose/libmemprov-syms.so" >ra.out &&
	grep -x "check-realign: ok" ra.out &&
	objcopy -O binary -j .text "$TOP/interpose/libmemprov-syms.so" syms.text &&
	objcopy -O binary -j .text "$MEMPROV_LIB" lib.text &&
	test -s lib.text && cmp syms.text lib.text &&
	test_status 2 "$TOP/scripts/check-realign.sh" "$MEMPROV_LIB" 2>ra.err &&
	grep -q "has no symbol table" ra.err
'

test_expect_success 'malloc, calloc, realloc, free called with a misaligned stack: no crash, every block seen' '
	"$BIN/harm" misaligned >mis-bare.out &&
	traced mis "$BIN/harm" misaligned >mis.out 2>mis.err &&
	test_cmp mis-bare.out mis.out && test ! -s mis.err &&
	memprov leaks --all --json mis.trace >mis.json &&
	jget --check mis.json state=exited "=sum(s[\"blocks\"] for s in j[\"sites\"] if s[\"bytes\"] == 1000 * s[\"blocks\"])==100"
'

test_expect_success 'MEMPROV_OUTPUT naming a directory, or a link to one, puts memprov.PID.trace in it' '
	mkdir -p outdir &&
	test_status 3 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT=outdir "$BIN/harm" quickexit &&
	LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT=outdir2/ sh -c "mkdir -p outdir2; exit 0" &&
	ls outdir | grep -x "memprov\.[0-9]*\.trace" &&
	test "$(ls outdir | wc -l)" = 1 &&
	ln -s outdir outlink &&
	test_status 3 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT=outlink "$BIN/harm" quickexit &&
	test -L outlink && test "$(ls outdir | grep -c "^memprov\.[0-9]*\.trace$")" = 2
'

test_expect_success 'MEMPROV_OUTPUT naming a device: no file made, one warning, same status' '
	ls /dev >before &&
	test_status 3 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT=/dev/full "$BIN/harm" quickexit 2>dev.err &&
	test "$(wc -l <dev.err)" = 1 && grep "not a regular file" dev.err &&
	ls /dev >after && test_cmp before after
'

test_expect_success 'programs with no signal trouble count nothing as skipped' '
	traced pl2 /usr/bin/python3 -c "import json; json.dumps(list(range(1000)))" &&
	traced cu env LD_LIBRARY_PATH="$BIN" "$BIN/cuda-rt-dyn" >/dev/null 2>&1 || true
	for f in pl2 cu; do
		test -f $f.trace || continue
		memprov stats --json $f.trace >$f.json &&
		jget --check $f.json skipped_events=0 || return 1
	done
'

test_expect_success 'the exception ABI (_Unwind_*) is libgcc_s.so.1 as bare; a raise returns' '
	# libmemprov.so lists libgcc_s before libunwind: with libunwind alone
	# in its dependencies, libunwind defined _Unwind_RaiseException ahead
	# of libgcc_s for programs that load libgcc_s later (a C program
	# calling a C++ library, rustc), and this raise on a makecontext
	# stack never returned
	# (every signal blocked: only SIGKILL ends it)
	"$BIN/unwind_abi" >ua-bare.out &&
	cat ua-bare.out &&
	grep -q "^_Unwind_RaiseException libgcc_s.so.1$" ua-bare.out &&
	grep -q "^raise returned 5$" ua-bare.out &&
	timeout -s KILL 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/ua.trace" "$BIN/unwind_abi" >ua.out 2>ua.err &&
	test_cmp ua-bare.out ua.out && test ! -s ua.err &&
	memprov stats ua.trace >ua.stats && grep -q "^ended: exited with status 0$" ua.stats
'

test_expect_success 'allocations on 16 KiB thread stacks and on 8 and 12 KiB alternate signal stacks: no crash, all seen' '
	# a thread'"'"'s first capture read /proc/self/maps with 8 KiB of buffers
	# on its stack, and the capture'"'"'s arrays took 3.2 KiB: SIGSEGV on a
	# PTHREAD_STACK_MIN stack and in a handler on an 8 KiB alternate stack
	for a in threads "threads own" "altstack 8192" "altstack 12288"; do
		n=$(echo $a | tr -d " ") &&
		"$BIN/small_stacks" $a >ss-bare-$n.out 2>/dev/null &&
		timeout -s KILL 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/ss-$n.trace" \
			"$BIN/small_stacks" $a >ss-$n.out 2>ss-$n.err &&
		test_cmp ss-bare-$n.out ss-$n.out && cat ss-$n.err &&
		test "$(grep -c "^memprov" ss-$n.err)" = 0 &&
		memprov stats ss-$n.trace >ss-$n.stats &&
		grep -q "^ended: exited with status 0$" ss-$n.stats &&
		awk -v want=$(case $a in threads*) echo 8000 ;; *) echo 1000 ;; esac) \
			"\$1 == \"malloc\" { gsub(\",\", \"\", \$2); ok = \$2 >= want } END { exit !ok }" ss-$n.stats ||
		return 1
	done
'

test_expect_success 'a thread that recurses to within 1,200 B of the end of its 16 KiB stack and allocates there: no crash, the allocations recorded without frames' '
	# the capture took 2.3 KiB below malloc (its arrays, and a rule read
	# from .eh_frame through dl_iterate_phdr), and memprov'"'"'s static TLS,
	# which glibc carves from every thread'"'"'s stack, was 1.8 KiB: SIGSEGV
	# (status 139) with 2,400 B left, where the bare run needs 167 B
	"$BIN/small_stacks" deep 1200 >deep-bare.out 2>deep-bare.err &&
	cat deep-bare.out deep-bare.err &&
	timeout -s KILL 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/deep.trace" \
		"$BIN/small_stacks" deep 1200 >deep.out 2>deep.err ||
	{ echo "traced: status $?"; return 1; }
	cat deep.err &&
	test_cmp deep-bare.out deep.out &&
	test "$(grep -c "^memprov" deep.err)" = 0 &&
	# no more than 900 B of stack for an allocation memprov does not walk
	used=$(sed -n "s/.*the deepest allocations used \([0-9]*\) bytes.*/\1/p" deep.err) &&
	test "$used" -le 900 &&
	memprov stats deep.trace >deep.stats &&
	grep -q "^ended: exited with status 0$" deep.stats &&
	# the 1,000 mallocs at the bottom (and the levels just above), counted
	n=$(sed -n "s/^without native frames (too little stack left to walk): //p" deep.stats) &&
	test "$n" -ge 1000 && test "$n" -le 1100 &&
	memprov stats --json deep.trace >deep.json &&
	jget --check deep.json no_room_stacks=$n &&
	# and the gate says it too
	test_status 1 memprov check --json deep.trace >deep.check.json &&
	jget --check deep.check.json traces.0.no_room_stacks=$n traces.0.skipped_events=0 &&
	test_status 1 memprov check deep.trace >deep.check &&
	grep -qx "  note: $n allocations have no native frames: too little stack was left to walk" deep.check &&
	# the block leaked from the top of the stack keeps its frames
	memprov leaks deep.trace >deep.leaks &&
	grep -q "^note: $n allocations have no native frames" deep.leaks &&
	grep -A2 "^definitely lost: 1 site" deep.leaks | grep -q "deep_leak .*small_stacks.c:"
'

test_expect_success 'a program that confines itself with seccomp (kill on any other call) runs as bare; the trace stops there' '
	# memprov'"'"'s own calls after the filter (pwrite64, madvise, prlimit64
	# for a new chunk) were not on its list: SIGSYS, status 159. denykill
	# kills on madvise only, args on madvise with any advice but
	# MADV_DONTNEED (memprov asks for MADV_POPULATE_WRITE)
	# twofilters: a deny-list first, under which memprov cannot read the
	# second filter (process_vm_readv fails): that one stops tracing too
	# strict3: strict mode with a third argument, which prctl ignores
	# closefrom: closefrom(3) after an allow-list without fstat (the
	# descriptor hooks checked memprov'"'"'s numbers with fstat: SIGSYS)
	for m in prctl syscall dlsym strict strict3 denykill args twofilters closefrom; do
		"$BIN/seccomp_filter" $m >sc-bare-$m.out &&
		timeout -s KILL 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/sc-$m.trace" \
			"$BIN/seccomp_filter" $m >sc-$m.out 2>sc-$m.err ||
		{ echo "$m: status $?"; return 1; }
		test_cmp sc-bare-$m.out sc-$m.out &&
		grep -q "^memprov: the program installs a seccomp filter: tracing stopped; the program goes on$" sc-$m.err &&
		memprov leaks --json sc-$m.trace >sc-$m.json &&
		jget --check sc-$m.json state=stopped \
			"=[f[\"function\"] for s in j[\"sites\"] for f in s[\"frames\"][:1]]==[\"before_filter\"]" ||
		return 1
	done &&
	memprov check sc-prctl.trace >sc-check.out &&
	grep -q "not gated: tracing stopped before the process ended (the program installs a seccomp filter): what it freed later is not in the trace and there was no scan: no verdict" sc-check.out &&
	test_status 1 memprov check --reachable sc-prctl.trace >sc-check-r.out &&
	grep -q "^  tracing stopped: the program installs a seccomp filter before the process ended: live when it stopped$" sc-check-r.out
'

test_expect_success 'memprov'"'"'s warnings under a file-size limit of 0, stderr a file (sshd'"'"'s child): no SIGXFSZ' '
	# the write of the warning failed with EFBIG and raised SIGXFSZ,
	# which killed the process (status 153)
	# (stdout a pipe: the program'"'"'s own write to a file would fail too)
	{ "$BIN/seccomp_filter" fsize 2>fs-bare.err; echo "status $?"; } | cat >fs-bare.out &&
	{ traced fs "$BIN/seccomp_filter" fsize 2>fs.err; echo "status $?"; } | cat >fs.out &&
	cat fs.out && test_cmp fs-bare.out fs.out && grep -qx "status 0" fs.out &&
	test ! -s fs-bare.err && test ! -s fs.err
'

test_expect_success 'a sandboxed process that runs a program: the program starts without memprov, as bare' '
	# the filter stays with the new program, where memprov'"'"'s start-up
	# (fcntl, pwrite64, madvise) was killed: status 159. Another preloaded
	# object stays in LD_PRELOAD
	"$BIN/seccomp_filter" exec >ex-bare.out &&
	traced ex "$BIN/seccomp_filter" exec >ex.out 2>ex.err &&
	test_cmp ex-bare.out ex.out && grep -qx "child: LD_PRELOAD (unset)" ex.out &&
	timeout 60 env LD_PRELOAD="/lib/x86_64-linux-gnu/libgcc_s.so.1 $MEMPROV_LIB" \
		MEMPROV_OUTPUT="$TRASH/ex2.trace" "$BIN/seccomp_filter" exec >ex2.out 2>ex2.err &&
	grep -qx "child: LD_PRELOAD /lib/x86_64-linux-gnu/libgcc_s.so.1" ex2.out &&
	memprov stats ex.trace | grep -qx "ended: tracing stopped: the program installs a seccomp filter"
'

test_expect_success 'a program run under a filter that refuses file creation (ENOSYS) starts untraced without a word on stderr' '
	# man-db'"'"'s children: the filter only fails memprov'"'"'s calls, so
	# libmemprov.so stays in LD_PRELOAD; the exec'"'"'d program could not
	# create its trace and printed "cannot create the trace file" there
	"$BIN/seccomp_filter" nocreate >nc-bare.out 2>nc-bare.err &&
	traced nc "$BIN/seccomp_filter" nocreate >nc.out 2>nc.err &&
	test ! -s nc-bare.err && test ! -s nc.err &&
	grep -qx "child: LD_PRELOAD $MEMPROV_LIB" nc.out &&
	test ! -e nc.1.trace &&
	memprov stats nc.trace | grep -q "^ended: replaced by exec"
'

test_expect_success 'a filter that kills on stat, then directory streams from fdopendir (procfs too): as bare' '
	# fdopendir'"'"'s check made a stat system call, which no filter was
	# checked against: killed by SIGSYS (159)
	"$BIN/seccomp_filter" killstat 1000 >ks-bare.out &&
	traced ks "$BIN/seccomp_filter" killstat 1000 >ks.out 2>ks.err &&
	test_cmp ks-bare.out ks.out && test ! -s ks.err &&
	printf "listed: 1\ndone\n" >expect && test_cmp expect ks.out
'

test_expect_success 'a deny-list filter that fails memprov'"'"'s calls, never kills: tracing goes on to the scan at exit' '
	"$BIN/seccomp_filter" denyerrno >de-bare.out &&
	traced de "$BIN/seccomp_filter" denyerrno >de.out 2>de.err &&
	test_cmp de-bare.out de.out && test ! -s de.err &&
	memprov leaks --json de.trace >de.json &&
	jget --check de.json state=exited reach.status=done "=\"seccomp\" in j[\"reach\"][\"notes\"]==true" \
		"=sorted(f[\"function\"] for s in j[\"sites\"] for f in s[\"frames\"][:1])==[\"after_filter\", \"before_filter\"]"
'

test_expect_success 'a filter that allows memprov'"'"'s own calls and kills on others: traced to the end, threads, dlopen and the scan' '
	# the list in tests/progs/seccomp_filter.c is hooks_sandbox.c'"'"'s: a
	# call memprov makes while it traces and does not list kills here
	"$BIN/seccomp_filter" ownlist >ol-bare.out &&
	traced ol "$BIN/seccomp_filter" ownlist >ol.out 2>ol.err &&
	test_cmp ol-bare.out ol.out && test ! -s ol.err &&
	memprov leaks --json ol.trace >ol.json &&
	jget --check ol.json state=exited reach.status=done "=\"seccomp\" in j[\"reach\"][\"notes\"]==true" \
		"=sum(s[\"blocks\"] for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"churn_thread\")==3"
'

test_expect_success 'a program that lowers RLIMIT_NOFILE to 3: as bare, threads recorded, the scan says why it could not run' '
	# the scan needs a descriptor for /proc/self/maps; its status
	# (no-memory-map) was refused by the reader as a corrupt record
	"$BIN/nofile" >nf-bare.out &&
	traced nf "$BIN/nofile" >nf.out 2>nf.err &&
	test_cmp nf-bare.out nf.out && test ! -s nf.err &&
	memprov leaks --json nf.trace >nf.json 2>nf.leaks.err && test ! -s nf.leaks.err &&
	jget --check nf.json reach.status=no-memory-map damaged=false \
		"=sum(s[\"blocks\"] for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"thr\")==4"
'

test_expect_success 'syscall() and prctl() through the hooks behave as libc'"'"'s: results, errno, six arguments, a forked child' '
	"$BIN/seccomp_filter" calls >calls-bare.out &&
	traced calls "$BIN/seccomp_filter" calls >calls.out 2>calls.err &&
	test_cmp calls-bare.out calls.out && test ! -s calls.err &&
	grep -qx "mmap offset 1" calls.out && grep -qx "fork child 7" calls.out &&
	grep -qx "close(-1) -1 EBADF" calls.out && grep -qx "prctl name memprov-x" calls.out &&
	grep -qx "clone child 8" calls.out &&
	# children of syscall(SYS_fork) and of a fork-like SYS_clone wrote into
	# their parent'"'"'s trace (no fork handling ran): each has its own now
	memprov stats calls.trace >calls.stats 2>calls.stats.err && test ! -s calls.stats.err &&
	grep -qx "ended: exited with status 0" calls.stats &&
	test "$(ls "$TRASH" | grep -c "^calls\.[0-9]*\.trace$")" = 2 &&
	for t in "$TRASH"/calls.[0-9]*.trace; do memprov stats "$t"; done >calls.kids &&
	grep -qx "ended: exited with status 7" calls.kids && grep -qx "ended: exited with status 8" calls.kids
'

test_expect_success 'under ulimit -v, Python maps nearly what it maps bare: memprov reserves little address space there' '
	# its Python tables reserved 24 MiB from the program'"'"'s allocator:
	# MemoryError came 26 MiB earlier than bare under a 400 MiB limit
	cat >asl.py <<-\EOF &&
	l = []
	try:
	    while True:
	        l.append(bytearray(1 << 20))
	except MemoryError:
	    print(len(l))
	EOF
	bare=$( (ulimit -v 409600; /usr/bin/python3 asl.py) ) &&
	mine=$( (ulimit -v 409600; traced asl /usr/bin/python3 asl.py) ) &&
	echo "MiB before MemoryError: bare $bare, traced $mine" &&
	test "$mine" -ge $((bare - 16)) &&
	memprov stats asl.trace >asl.stats &&
	grep -q "^ended: exited with status 0$" asl.stats
'

test_expect_success 'a program that fills its address-space limit: the scan lifts the limit, the gate finds only the leak' '
	# the scan at exit found no room to map its tables under the limit the
	# program had filled, and the gate counted all 240 MiB it held live
	# (exit 23; a helper'"'"'s sweep). A soft limit is lifted to the hard
	# one for the scan; a hard one only by a process that may (root with
	# CAP_SYS_RESOURCE), else the reason names the limit
	cat >asfill.c <<-\EOF &&
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	static void **keep;
	static size_t n, cap;
	static __attribute__((noinline)) void *lose_me(void) { return malloc(40); }
	int main(void)
	{
		void *p = lose_me();
		memset(p, 1, 40);
		p = NULL;
		for (;;) {
			if (n == cap) {
				void **k = realloc(keep, (cap = cap ? cap * 2 : 64) * sizeof(*k));
				if (!k)
					break;
				keep = k;
			}
			if (!(p = malloc(100000)))
				break;
			memset(p, 1, 64);
			keep[n++] = p;
		}
		printf("%s\n", n > 1000 ? "filled" : "few");
		return 0;
	}
	EOF
	${CC:-cc} -g -O1 -o asfill asfill.c &&
	test "$( (ulimit -v 262144; ./asfill) )" = filled &&
	st=0 && (ulimit -S -v 262144; memprov run -d asd --check -- ./asfill) >asd.out 2>asd.err || st=$? &&
	cat asd.err &&
	test "$(cat asd.out) $st" = "filled 23" &&
	grep -q "lost at exit (definitely and indirectly): 40 B in 1 block" asd.err &&
	grep -q "in lose_me at .*asfill.c:6" asd.err &&
	! grep -q "ran out of memory" asd.err &&
	(ulimit -v 262144; memprov run -d ash --check -- ./asfill) >ash.out 2>ash.err || : &&
	cat ash.err &&
	if grep -q "ran out of memory" ash.err
	then
		grep -q "address-space limit (RLIMIT_AS, ulimit -v), which it could not lift" ash.err &&
		memprov leaks --json ash/memprov.*.trace >ash.json &&
		jget --check ash.json "=\"address-space-limit\" in j[\"reach\"][\"notes\"]==true"
	else
		grep -q "lost at exit (definitely and indirectly): 40 B in 1 block" ash.err
	fi &&
	test "$(cat ash.out)" = filled
'

test_expect_success 'an allocator preloaded before memprov: reallocarray'"'"'s block is that allocator'"'"'s, the heap not traced and said so, no verdict' '
	# jemalloc and tcmalloc define no reallocarray: the program'"'"'s call
	# bound to memprov'"'"'s hook, which handed it to glibc'"'"'s realloc, and
	# the allocator'"'"'s free then crashed on glibc'"'"'s block (ls -laR:
	# SIGSEGV under jemalloc, abort under tcmalloc; a helper'"'"'s sweep)
	cat >bump.c <<-\EOF &&
	#include <errno.h>
	#include <stdlib.h>
	#include <string.h>
	#include <sys/mman.h>
	static char *arena, *top;
	static const size_t cap = 64 << 20;
	int bump_owns(void *p) { return arena && (char *)p >= arena && (char *)p < arena + cap; }
	void *malloc(size_t n)
	{
		void *p;
		if (!arena) {
			arena = mmap(0, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			top = arena;
		}
		n = (n + 15) & ~(size_t)15;
		if (arena == MAP_FAILED || top + n + 16 > arena + cap) {
			errno = ENOMEM;
			return NULL;
		}
		*(size_t *)top = n;
		p = top + 16;
		top += n + 16;
		return p;
	}
	void free(void *p) { (void)p; }
	void *calloc(size_t a, size_t b)
	{
		size_t n;
		void *p = __builtin_mul_overflow(a, b, &n) ? NULL : malloc(n);
		return p ? memset(p, 0, n) : NULL;
	}
	void *realloc(void *p, size_t n)
	{
		size_t old = p && bump_owns(p) ? ((size_t *)p)[-2] : 0;
		void *q = malloc(n);
		if (q && p)
			memcpy(q, p, old < n ? old : n);
		return q;
	}
	void *memalign(size_t al, size_t n)
	{
		char *p = malloc(n + al);
		return p ? (void *)(((size_t)p + al - 1) & ~(al - 1)) : NULL;
	}
	int posix_memalign(void **o, size_t al, size_t n) { return (*o = memalign(al, n)) ? 0 : ENOMEM; }
	void *aligned_alloc(size_t al, size_t n) { return memalign(al, n); }
	EOF
	cat >bumpuse.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <dlfcn.h>
	#include <stdio.h>
	#include <stdlib.h>
	int main(void)
	{
		int (*owns)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "bump_owns");
		char *p = reallocarray(NULL, 10, 10), *q = malloc(30);
		p[0] = 1;
		printf("%s %s\n", owns && owns(p) ? "bump" : "foreign", owns && owns(q) ? "bump" : "foreign");
		free(p);
		return 0;
	}
	EOF
	${CC:-cc} -shared -fPIC -O1 -o libbump.so bump.c &&
	${CC:-cc} -O1 -o bumpuse bumpuse.c -ldl &&
	LD_PRELOAD="$TRASH/libbump.so" ./bumpuse >bump-bare.out &&
	test "$(cat bump-bare.out)" = "bump bump" &&
	traced bump env LD_PRELOAD="$TRASH/libbump.so:$MEMPROV_LIB" ./bumpuse >bump.out 2>bump.err &&
	test_cmp bump-bare.out bump.out &&
	grep -qx "memprov: the heap is not traced: malloc is that of a library preloaded before libmemprov.so (put libmemprov.so first in LD_PRELOAD): $TRASH/libbump.so" bump.err &&
	memprov leaks --json bump.1.trace >bump.json &&
	jget --check bump.json totals.heap.blocks=0 &&
	memprov check bump.1.trace >bump.check &&
	grep -q "not gated: the heap was not traced: the program'"'"'s malloc is that of a library preloaded before libmemprov.so" bump.check &&
	traced bumpf env LD_PRELOAD="$MEMPROV_LIB:$TRASH/libbump.so" ./bumpuse >bumpf.out 2>bumpf.err &&
	test_cmp bump-bare.out bumpf.out && test ! -s bumpf.err &&
	# a library ahead that wraps malloc and calls the next one (memprov'"'"'s):
	# memprov must not call it back (its real malloc stays the next one)
	cat >wrapm.c <<-\EOF &&
	#define _GNU_SOURCE
	#include <dlfcn.h>
	#include <stddef.h>
	static void *(*next_malloc)(size_t);
	void *malloc(size_t n)
	{
		if (!next_malloc)
			next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
		return next_malloc(n);
	}
	EOF
	${CC:-cc} -shared -fPIC -O1 -o libwrapm.so wrapm.c -ldl &&
	printf "a\nb\n" >wr.in && sort wr.in >wr-bare.out &&
	traced wr env LD_PRELOAD="$TRASH/libwrapm.so:$MEMPROV_LIB" sort wr.in >wr.out 2>wr.err &&
	test_cmp wr-bare.out wr.out
'

test_expect_success 'a program that lowers its own file-size limit: tracing stops, the gate gives no verdict on what it freed later' '
	# the gate counted all 722 KiB the program held when its trace
	# reached the limit and failed it (exit 23), though it freed them all
	# (valgrind: all heap blocks were freed; a helper'"'"'s sweep)
	cat >fsz.c <<-\EOF &&
	#include <signal.h>
	#include <stdio.h>
	#include <stdlib.h>
	#include <sys/resource.h>
	int main(void)
	{
		struct rlimit rl = { 50000, 50000 };
		void **v;
		setrlimit(RLIMIT_FSIZE, &rl);
		signal(SIGXFSZ, SIG_IGN);
		v = malloc(20000 * sizeof(*v));
		for (int i = 0; i < 20000; i++)
			v[i] = malloc(16 + i % 200);
		for (int i = 0; i < 20000; i++)
			free(v[i]);
		free(v);
		puts("done");
		return 0;
	}
	EOF
	${CC:-cc} -O1 -o fsz fsz.c &&
	./fsz >fsz-bare.out &&
	memprov run -d fszd --check -- ./fsz >fsz.out 2>fsz.err &&
	test_cmp fsz-bare.out fsz.out &&
	grep -q "not gated: tracing stopped before the process ended (the trace reached the file-size limit (ulimit -f)): what it freed later is not in the trace" fsz.err
'

test_expect_success 'gdb on a traced program: a breakpoint set by a function name stops only in the program' '
	# libmemprov.so carried its symbol table and debugging information:
	# "break add" in gdb took reach_roots.c'"'"'s add too, and the traced
	# program stopped in memprov'"'"'s scan at exit (a helper'"'"'s sweep)
	cat >bp.c <<-\EOF &&
	#include <stdlib.h>
	void *g;
	int add(int a, int b) { return a + b; }
	int words(int a) { return a * 2; }
	int main(void) { g = malloc(10); return add(1, 2) + words(0) - 3; }
	EOF
	${CC:-cc} -g -O0 -o bp bp.c &&
	gdbrun() {
		timeout 120 gdb -q -nx -batch -ex "$1" \
			-ex "set env MEMPROV_OUTPUT=$TRASH/bp.%p.trace" -ex "break add" -ex "break words" \
			-ex run -ex continue -ex continue -ex bt ./bp 2>&1 | grep -v "^\[" | grep -v "^Using host libthread_db"
	} &&
	gdbrun "unset environment LD_PRELOAD" >bp-bare.out &&
	gdbrun "set environment LD_PRELOAD=$MEMPROV_LIB" >bp.out &&
	cat bp.out && test_cmp bp-bare.out bp.out &&
	test "$(grep -c "^Breakpoint [12], " bp.out)" = 2 && grep -qx "No stack." bp.out &&
	ls "$TRASH" | grep -q "^bp\.[0-9]*\.trace$" &&
	! readelf -SW "$MEMPROV_LIB" | grep -E " \.symtab | \.debug_info "
'


test_expect_success 'a forked child of a process that chrooted or took another user: no warning of memprov'"'"'s, same output; the chrooted one traced' '
	# the child could not create its trace (no such directory in the
	# jail, or a directory of root'"'"'s) and said so on the program'"'"'s
	# stderr, once per fork (a helper'"'"'s sweep)
	cat >jail.c <<-\EOF &&
	#include <stdio.h>
	#include <stdlib.h>
	#include <sys/wait.h>
	#include <unistd.h>
	static char *keep;
	int main(int argc, char **argv)
	{
		int st;
		pid_t p;

		keep = malloc(100);
		if (argc < 3 || (argv[1][0] == '"'"'c'"'"' ? chroot(argv[2]) || chdir("/") : setgid(65534) || setuid(65534)))
			return 3;
		p = fork();
		if (p == 0) {
			keep = malloc(50);
			_exit(4);
		}
		waitpid(p, &st, 0);
		printf("child %d\n", WEXITSTATUS(st));
		return 0;
	}
	EOF
	${CC:-cc} -O0 -o jail jail.c && mkdir -p jaildir jailtr && chmod 755 jailtr &&
	for how in chroot user; do
		st=0 && ./jail $how "$TRASH/jaildir" >jail-bare.out 2>jail-bare.err || st=$?
		if [ "$st" = 3 ]; then echo "$how refused here (not root?)"; continue; fi
		test "$st" = 0 &&
		timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/jailtr/j.%p.trace" \
			./jail $how "$TRASH/jaildir" >jail.out 2>jail.err &&
		test_cmp jail-bare.out jail.out && test_cmp jail-bare.err jail.err || return 1
		if [ $how = chroot ]; then
			# the child creates its trace in the directory kept open before the
			# chroot (it ran untraced, and its leaks went unreported)
			test "$(ls jailtr | grep -c "^j\.[0-9]*\.trace$")" = 2 &&
			for t in jailtr/j.*.trace; do memprov stats "$t"; done >jail.stats &&
			grep -qx "ended: exited with status 4" jail.stats || return 1
		fi
	done &&
	memprov stats "$(ls jailtr/j.*.trace | head -1)" | grep -qx "ended: exited with status 0"
'

# a child the command runs under another user (subprocess's user=, as
# Python's test_subprocess does) may not write in root's run directory:
# it runs untraced, and its stderr, which the caller captures, is as bare
# (before: "memprov: cannot create the trace file ...: Permission denied")
test_expect_success 'memprov run: a child exec'"'"'d as another user writes nothing of memprov'"'"'s on its stderr' '
	cat >asuser.py <<-\EOF &&
	import subprocess
	r = subprocess.run(["/bin/echo", "hi"], user="nobody", capture_output=True)
	print(r.returncode, r.stdout.decode().strip(), len(r.stderr))
	EOF
	st=0 && /usr/bin/python3 asuser.py >asuser-bare.out 2>&1 || st=$?
	if [ "$st" != 0 ] || ! grep -qx "0 hi 0" asuser-bare.out; then
		echo "cannot run a child as nobody here: not checked"; cat asuser-bare.out; return 0
	fi
	rm -rf asuser.d &&
	memprov run -d asuser.d -- /usr/bin/python3 asuser.py >asuser.out 2>asuser.err &&
	test_cmp asuser-bare.out asuser.out &&
	memprov run -o "$TRASH/asuser.%p.trace" -- /usr/bin/python3 asuser.py >asuser2.out 2>/dev/null &&
	test_cmp asuser-bare.out asuser2.out
'

# A shell saves a descriptor it redirects to 10 or above. Under `ulimit
# -n 12` or 14, memprov run -d held the trace, /proc/self/statm and the
# run index at 8 to 13: dash's `exec 3>file` failed (Too many open
# files, status 1). Under 64 descriptors memprov keeps only its trace
# open; the RSS samples and the index open theirs each time.
test_expect_success 'ulimit -n 12 and 14, run -d: a shell redirects as bare; RSS samples and the index are written' '
	for n in 12 14; do
		rm -rf "nf$n" &&
		sh -c "ulimit -n $n; exec dash -c '"'"'exec 3>f3; echo hi >&3; cat f3'"'"'" >bare$n.out 2>&1 &&
		sh -c "ulimit -n $n; MEMPROV_RSS_INTERVAL_MS=1 exec \"$MEMPROV_CLI\" run -d nf$n -- dash -c '"'"'exec 3>f3; echo hi >&3; cat f3; i=0; while [ \$i -lt 3000 ]; do i=\$((i+1)); done'"'"'" >mp$n.out 2>mp$n.err &&
		test_cmp bare$n.out mp$n.out &&
		test "$(grep -c "^exit" "nf$n/index")" = 2 &&
		memprov dump "$(ls -S "nf$n"/*.trace | head -1)" | grep -q " rss " || exit 1
	done
'

# A program that opens descriptors until open fails, then exits, left the
# scan none for /proc/self/maps: no scan, and the gate counted all it
# held live (100 reachable blocks: 6,400 B, FAIL). The scan raises the
# soft limit by 16 for itself (the hard one only where the process may)
# and puts it back.
test_expect_success 'a program that used up its descriptors: the scan still runs under the soft limit, gate ok' '
	cat >allfds.c <<-\EOF &&
	#include <fcntl.h>
	#include <stdio.h>
	#include <stdlib.h>
	char *keep[100];
	int main(void)
	{
		int i, n = 0;
		for (i = 0; i < 100; i++)
			keep[i] = malloc(64);
		while (open("/dev/null", O_RDONLY) >= 0)
			n++;
		printf("opened %d\n", n);
		return 0;
	}
	EOF
	${CC:-cc} -O1 -o allfds allfds.c &&
	sh -c "ulimit -Sn 256; exec \"$MEMPROV_CLI\" run --check -o af.trace -- ./allfds" >af.out 2>af.err &&
	grep "^opened 2[0-9][0-9]$" af.out &&
	memprov leaks --json af.trace >af.json &&
	jget --check af.json reach.status=done reach.classes.definitely_lost.blocks=0 \
		"=j[\"reach\"][\"classes\"][\"still_reachable\"][\"blocks\"]>=100==true"
'

test_done
