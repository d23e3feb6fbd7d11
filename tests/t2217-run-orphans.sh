#!/bin/sh
# t2217-run-orphans.sh - process trees whose parents go first, and run
# directories shared by mistake:
# - a forked child whose parent exited before the child opened its trace
#   (a daemon's double fork, `cmd &` in a shell that exits at once) names
#   the process that forked it as its ppid, not the reaper (1): its
#   parent's trace is found and `run --check --children` gates it;
# - the image such an orphan exec's is gated with it;
# - a child still running when CMD ends is not gated as if it had died
#   there (all it holds counted): no verdict, and the run passes;
# - two runs given the same -d DIR: the second is refused.
# late.so's fork child handler runs before libmemprov.so's and waits until
# the parent has exited: the orphaned child is certain, not a race.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

test_expect_success 'build: late.so, an orphaning fork, a leaker, a child that outlives its parent' '
	cat >late.c <<-\EOC &&
	#include <pthread.h>
	#include <unistd.h>
	static pid_t parent;
	static void prepare(void) { parent = getpid(); }
	static void child(void) { while (getppid() == parent) usleep(1000); }
	__attribute__((constructor)) static void init(void) { pthread_atfork(prepare, NULL, child); }
	EOC
	cat >orph.c <<-\EOC &&
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	#include <unistd.h>
	static char *kept;
	int main(int argc, char **argv)
	{
		pid_t p;

		kept = malloc(300);
		memset(kept, 1, 300);
		p = fork();
		if (p == 0) {
			char *q = malloc(1000);
			memset(q, 1, 1000);
			q = NULL;
			if (argc > 1)
				execvp(argv[1], argv + 1);
			return 0;
		}
		printf("child=%d\n", (int)p);
		return 0;
	}
	EOC
	cat >lost1.c <<-\EOC &&
	#include <stdlib.h>
	#include <string.h>
	int main(void) { char *p = malloc(777); memset(p, 1, 777); p = NULL; return 0; }
	EOC
	cat >outlive.c <<-\EOC &&
	#include <stdlib.h>
	#include <string.h>
	#include <unistd.h>
	#include <sys/prctl.h>
	static char *keep;
	int main(int argc, char **argv)
	{
		if (fork() == 0) {
			keep = malloc(5000);
			memset(keep, 1, 5000);
			if (argc > 1) /* nodump: as ssh-agent, gpg-agent */
				prctl(PR_SET_DUMPABLE, 0);
			usleep(1500000);
			free(keep);
			return 0;
		}
		usleep(200000);
		return 0;
	}
	EOC
	cc -shared -fPIC -o late.so late.c &&
	cc -O0 -o orph orph.c && cc -O0 -o lost1 lost1.c && cc -O0 -o outlive outlive.c
'

test_expect_success 'an orphaned child names its parent: index, header, inherited blocks known' '
	timeout 30 "$MEMPROV_CLI" run -d o1 -- env LD_PRELOAD="$MEMPROV_LIB:$TRASH/late.so" ./orph >out &&
	child=$(sed -n "s/^child=//p" out) &&
	n=0 && while ! grep -q "^exit	$child	" o1/index && test $n -lt 100; do sleep 0.1; n=$((n + 1)); done &&
	cat o1/index &&
	parent=$(awk -F"\t" "\$1 == \"start\" && \$5 == \"new\" && \$6 == \"./orph\" { print \$2 }" o1/index) &&
	test -n "$parent" &&
	grep "^start	$child	$parent	[0-9]*	fork	" o1/index &&
	grep "^exit	$child	$parent	[0-9]*	0	" o1/index &&
	memprov leaks --json "o1/memprov.$child.trace" >child.json &&
	jget --check child.json ppid=$parent inherited.known=true inherited.held.bytes=300
'

test_expect_success 'run --check --children: the leaker an orphan exec s fails the gate' '
	{ timeout 30 "$MEMPROV_CLI" run -d o2 --check --max-leak 0 --children -- \
		env LD_PRELOAD="$MEMPROV_LIB:$TRASH/late.so" sh -c "./orph ./lost1; sleep 0.5" >out 2>err; rc=$?; } &&
	cat err && test $rc = 23 &&
	grep "^memprov check: .*(pid [0-9]*: ./lost1): FAIL" err &&
	grep "777 B in 1 block" err
'

test_expect_success 'run --check --children: a clean child still running when CMD ends is not gated' '
	timeout 30 "$MEMPROV_CLI" run -d o3 --check --max-leak 0 --children -- ./outlive >out 2>err &&
	cat err &&
	grep "not gated: still running when the command ended" err &&
	! grep "FAIL" err &&
	sleep 2 &&
	memprov check --max-leak 0 o3
'

test_expect_success 'check DIR while a child of the run still writes its trace: not gated, then gated once it ended' '
	# it failed on all the child held then (redis-server --daemonize: 816.7 KiB)
	timeout 30 "$MEMPROV_CLI" run -d o4 -- ./outlive >out 2>err &&
	"$MEMPROV_CLI" check --max-leak 0 o4 >now.txt &&
	cat now.txt &&
	grep "(pid [0-9]*: ./outlive): not gated: still running (the process writes its trace now): no exit yet, no verdict; check it once it has ended$" now.txt &&
	! grep "FAIL" now.txt &&
	sleep 2 &&
	"$MEMPROV_CLI" check --max-leak 0 o4 >later.txt &&
	test $(grep -c "(pid [0-9]*: ./outlive): ok$" later.txt) = 2
'

test_expect_success 'check DIR while a process that closed memprov'"'"'s descriptor runs: still not gated (the trace stays mapped)' '
	# a raw close_range(3, ~0) memprov cannot see: the gate took the
	# process for dead and failed it on all it held (the last review)
	cat >rawclose.c <<-\EOC &&
	#include <stdlib.h>
	#include <string.h>
	#include <unistd.h>
	static char *keep[10];
	int main(void)
	{
		long r;
		int i;
		for (i = 0; i < 10; i++) {
			keep[i] = malloc(1000);
			memset(keep[i], 1, 1000);
		}
		__asm__ volatile("syscall" : "=a"(r) : "a"(436L), "D"(3L), "S"(~0UL), "d"(0L)
				 : "rcx", "r11", "memory");
		(void)r;
		usleep(1500000);
		return 0;
	}
	EOC
	cc -O0 -o rawclose rawclose.c &&
	{ timeout 30 "$MEMPROV_CLI" run -d o5 -- ./rawclose >/dev/null 2>&1 & } &&
	n=0 && while ! ls o5/*.trace >/dev/null 2>&1 && test $n -lt 100; do sleep 0.02; n=$((n + 1)); done &&
	sleep 0.5 &&
	"$MEMPROV_CLI" check o5 >now5.txt &&
	grep "(pid [0-9]*: ./rawclose): not gated: still running (the process writes its trace now)" now5.txt &&
	wait &&
	"$MEMPROV_CLI" check o5 >later5.txt &&
	grep "(pid [0-9]*: ./rawclose): ok$" later5.txt
'

test_expect_success 'two runs given the same new -d DIR: the second is refused' '
	MEMPROV_DISABLE=1 timeout 30 "$MEMPROV_CLI" run -d same -- sleep 1 >out1 2>err1 &
	n=0 && while ! test -d same && test $n -lt 100; do sleep 0.01; n=$((n + 1)); done &&
	{ timeout 30 "$MEMPROV_CLI" run -d same -- true >out2 2>err2; rc=$?; } &&
	wait &&
	cat err2 && test $rc = 1 &&
	grep "run directory .same. is not empty" err2
'

test_expect_success 'run --check --children: a clean child still running that made itself not dumpable (its /proc/PID/fd unreadable) is not gated' '
	# ssh-agent, gpg-agent: prctl(PR_SET_DUMPABLE, 0) leaves /proc/PID/fd
	# to root; the gate took the process for dead and gated all it held
	mkdir nd && chmod 777 nd &&
	as_user=
	if test "$(id -u)" = 0; then
		command -v setpriv >/dev/null || { echo "setpriv missing"; false; }
		as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
	fi
	{ timeout 30 $as_user "$MEMPROV_CLI" run -d nd/r --check --max-leak 0 --children -- ./outlive nodump >out 2>err; rc=$?; } &&
	cat err && test $rc = 0 &&
	grep "not gated: still running when the command ended" err &&
	! grep "FAIL" err &&
	sleep 2 &&
	$as_user "$MEMPROV_CLI" check --max-leak 0 nd/r
'

# an image that a posix_spawn (vfork) child exec'd after its parent had
# exited names the reaper as its ppid (no trace of the child before it
# says otherwise): under -d, whose DIR holds this run's traces only,
# --children gates every trace of the run. waitorph.so's constructor runs
# before libmemprov.so's and waits until the spawner has exited.
test_expect_success 'run -d --check --children: the leak of a posix_spawn child orphaned before it started is gated' '
	cat >waitorph.c <<-\EOC &&
	#include <stdlib.h>
	#include <unistd.h>
	__attribute__((constructor)) static void init(void)
	{
		const char *w = getenv("WAIT_ORPHAN"); /* the pid of the spawner */

		if (w)
			while (getppid() == (pid_t)atoi(w))
				usleep(1000);
	}
	EOC
	cat >spawnexit.c <<-\EOC &&
	#include <spawn.h>
	#include <stdio.h>
	#include <unistd.h>
	extern char **environ;
	int main(int argc, char **argv)
	{
		char w[32], *env[256] = { w };
		int i;
		pid_t p;

		snprintf(w, sizeof(w), "WAIT_ORPHAN=%d", (int)getpid());

		for (i = 0; environ[i] && i < 254; i++)
			env[i + 1] = environ[i];
		env[i + 1] = NULL;
		if (argc < 2 || posix_spawn(&p, argv[1], NULL, NULL, argv + 1, env))
			return 1;
		_exit(0);
	}
	EOC
	cc -shared -fPIC -o waitorph.so waitorph.c && cc -o spawnexit spawnexit.c &&
	rm -rf sp &&
	{ timeout 60 "$MEMPROV_CLI" run -d sp --check --children -- \
		env LD_PRELOAD="$MEMPROV_LIB:$TRASH/waitorph.so" sh -c "./spawnexit ./lost1; sleep 0.5" \
		>sp.out 2>sp.err; rc=$?; } &&
	cat sp.err &&
	test $rc = 23 &&
	grep -q "lost1" sp/index &&
	grep "777 B" sp.err
'

test_done
