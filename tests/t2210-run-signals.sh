#!/bin/sh
# t2210-run-signals.sh - `memprov run` as a supervisor: the signals a
# parent sends it (HUP, INT, QUIT, TERM, USR1, USR2, ALRM, WINCH, CONT)
# reach the command once and do not kill memprov (once also when they
# went to the whole process group, which the command is in too); a
# signal the command sends its parent reaches memprov's parent; a signal ignored when memprov
# starts (nohup) stays ignored in the command, and reaches it once it
# takes it back with a handler; when the command dies of
# signal N, memprov dies of N too, without a core of its own; its
# "trace written" line starts a line of its own after a program that left
# an unterminated line on stderr.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/sigrecv" ||
	test_skip "libmemprov.so, memprov or tests/bin/sigrecv not built"

# wait_for PATTERN FILE: until FILE has a line matching PATTERN (10 s at most)
wait_for() {
	i=0
	until grep -q "$1" "$2" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 200 ] || { echo "no '$1' in $2 after 10 s" >&2; return 1; }
		sleep 0.05
	done
}

test_expect_success 'each signal sent to memprov reaches the command once; memprov waits for it' '
	# a shell starts background jobs with SIGINT and SIGQUIT ignored: reset them
	env --default-signal "$MEMPROV_CLI" run -o sig.trace -- "$BIN/sigrecv" got \
		>run.out 2>run.err &
	mp=$! &&
	wait_for "^ready" got &&
	for s in HUP:1 INT:2 QUIT:3 USR1:10 USR2:12 ALRM:14 WINCH:28 CONT:18; do
		kill -${s%:*} $mp && wait_for "^${s#*:} user" got || exit 1
	done &&
	kill -TERM $mp &&
	st=0 && wait $mp || st=$? &&
	cat run.err && test $st = 0 &&
	printf "ready\n1 user\n2 user\n3 user\n10 user\n12 user\n14 user\n28 user\n18 user\n15 user\n" >want &&
	test_cmp want got &&
	grep "^memprov: trace written to .*sig.trace" run.err
'

test_expect_success 'a signal ignored when memprov starts stays ignored in the command' '
	st=0 && env --ignore-signal=HUP "$MEMPROV_CLI" run -o hup.trace -- \
		sh -c "kill -HUP \$\$; echo alive" >out 2>err || st=$? &&
	test $st = 0 && echo alive >want && test_cmp want out
'

test_expect_success 'ignored when memprov starts (a script'"'"'s background job): the command that takes it back with a handler gets it, one that does not ignores it' '
	# memprov ignored them too, and the command'"'"'s handler never ran
	cat >catch.py <<-\EOF &&
	import signal, sys, time
	got = []
	for s in (signal.SIGINT, signal.SIGQUIT):
	    signal.signal(s, lambda n, f: got.append(n))
	open(sys.argv[1], "w").write("ready\n")
	t = time.time()
	while len(got) < 2 and time.time() - t < 10:
	    time.sleep(0.01)
	print(got)
	EOF
	for how in bare memprov; do
		rm -f ready.$how &&
		if [ $how = bare ]; then
			env --ignore-signal=INT --ignore-signal=QUIT /usr/bin/python3 catch.py ready.$how >ig.$how &
		else
			env --ignore-signal=INT --ignore-signal=QUIT "$MEMPROV_CLI" run -o ig.trace -- \
				/usr/bin/python3 catch.py ready.$how >ig.$how 2>ig.err &
		fi
		p=$! &&
		wait_for "^ready" ready.$how &&
		kill -INT $p && sleep 0.1 && kill -QUIT $p &&
		st=0 && wait $p || st=$? &&
		test $st = 0 && echo "[2, 3]" >want && test_cmp want ig.$how || exit 1
	done &&
	env --ignore-signal=INT "$MEMPROV_CLI" run -o ig2.trace -- sh -c "sleep 1; echo alive" >ig2.out 2>ig2.err &
	p=$! && sleep 0.4 && kill -INT $p &&
	st=0 && wait $p || st=$? &&
	test $st = 0 && echo alive >want && test_cmp want ig2.out
'

test_expect_success 'the command dies of signal N: memprov dies of N, and dumps no core of its own' '
	/usr/bin/python3 - "$MEMPROV_CLI" <<-\EOF
	import os, resource, signal, subprocess, sys
	resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
	for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGUSR1, signal.SIGABRT, signal.SIGQUIT):
	    p = subprocess.Popen([sys.argv[1], "run", "-o", "k%d.trace" % sig, "--",
	                          "sh", "-c", "kill -%d $$" % sig], stderr=subprocess.DEVNULL)
	    _, st = os.waitpid(p.pid, 0)
	    assert os.WIFSIGNALED(st) and os.WTERMSIG(st) == sig, (sig, st)
	    assert not os.WCOREDUMP(st), ("memprov dumped core", sig, st)
	    print(int(sig), "ok")
	EOF
'

test_expect_success 'the same death through a shell: 128+N, and --check keeps it' '
	st=0 && sh -c "\"$MEMPROV_CLI\" run -o k2.trace -- sh -c \"kill -USR2 \\\$\\\$\"" 2>/dev/null || st=$? &&
	test $st = $((128 + 12)) &&
	st=0 && sh -c "\"$MEMPROV_CLI\" run -o k3.trace --check -- sh -c \"kill -TERM \\\$\\\$\"" >/dev/null 2>&1 || st=$? &&
	test $st = $((128 + 15))
'

test_expect_success 'after an unterminated line on stderr (a file), memprov starts a new line' '
	memprov run -o u1.trace -- sh -c "printf partial >&2" 2>err1 &&
	head -n 1 err1 >first && echo partial >want && test_cmp want first &&
	sed -n 2p err1 | grep "^memprov: trace written to .*u1.trace" &&
	memprov run -o u2.trace -- sh -c "echo whole >&2" 2>err2 &&
	head -n 2 err2 | tail -n 1 | grep "^memprov: trace written to .*u2.trace" &&
	echo before >err3 &&
	memprov run -o u3.trace -- sh -c "printf partial >&2" 2>>err3 &&
	sed -n 2p err3 | grep -x partial && sed -n 3p err3 | grep "^memprov: trace written"
'

test_expect_success 'on a pipe nothing can be read back: one newline always comes first' '
	memprov run -o p1.trace -- sh -c "printf partial >&2" 2>&1 >/dev/null | cat >pipe1 &&
	head -n 1 pipe1 | grep -x partial && sed -n 2p pipe1 | grep "^memprov: trace written" &&
	memprov run -o p2.trace -- sh -c "echo whole >&2" 2>&1 >/dev/null | cat >pipe2 &&
	printf "whole\n\n" >want && head -n 2 pipe2 >got && test_cmp want got &&
	sed -n 3p pipe2 | grep "^memprov: trace written"
'

test_expect_success 'a signal to the whole process group reaches the command once, as bare' '
	# memprov and the command share a process group: killpg (timeout(1),
	# kill 0, a shell'"'"'s kill %1) reaches both, and memprov must not pass
	# it on again; a signal to memprov alone still goes on
	/usr/bin/python3 - "$MEMPROV_CLI" "$BIN/sigrecv" <<-\EOF
	import os, signal, subprocess, sys, time
	def ready(f):
	    for _ in range(200):
	        if os.path.exists(f) and open(f).read().startswith("ready"):
	            return
	        time.sleep(0.05)
	    raise SystemExit("no ready in " + f)
	p = subprocess.Popen([sys.argv[1], "run", "-o", "grp.trace", "--", sys.argv[2], "grp"],
	                     start_new_session=True, stderr=subprocess.DEVNULL)
	ready("grp")
	os.killpg(p.pid, signal.SIGUSR1)
	time.sleep(0.3)
	os.killpg(p.pid, signal.SIGUSR2)
	time.sleep(0.3)
	# the same signal to the group, then soon after to memprov alone: two
	os.killpg(p.pid, signal.SIGUSR1)
	time.sleep(0.02)
	os.kill(p.pid, signal.SIGUSR1)
	time.sleep(0.3)
	os.kill(p.pid, signal.SIGHUP)
	time.sleep(0.3)
	os.kill(p.pid, signal.SIGTERM)
	assert p.wait(30) == 0
	got = open("grp").read().split("\n")
	assert got == ["ready", "10 user", "12 user", "10 user", "10 user", "1 user", "15 user", ""], got
	EOF
'

test_expect_success 'the command signals its own group: once; its parent: memprov passes it up' '
	setsid -w "$MEMPROV_CLI" run -o own.trace -- sh -c \
		"n=0; trap \"n=\\\$((n+1))\" USR1; kill -USR1 0; sleep 0.3; echo n=\$n" >own 2>/dev/null &&
	echo n=1 >want && test_cmp want own &&
	sh -c "trap \"echo parent\" USR1; \"$MEMPROV_CLI\" run -o up.trace -- \
		sh -c \"trap \\\"echo child\\\" USR1; kill -USR1 \\\$PPID; sleep 0.3\"; echo done" >up 2>/dev/null &&
	printf "parent\ndone\n" >want && test_cmp want up &&
	# a command that ignores TERM and signals its group: memprov passes
	# nothing up (the parent is in no group the command signalled)
	/usr/bin/python3 - "$MEMPROV_CLI" <<-\EOF
	import signal, subprocess, sys
	got = []
	signal.signal(signal.SIGTERM, lambda s, f: got.append(s))
	p = subprocess.Popen([sys.argv[1], "run", "-o", "kg.trace", "--", "sh", "-c",
	                      "trap \"\" TERM; kill -TERM 0; echo alive"],
	                     start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
	out, _ = p.communicate(timeout=30)
	assert (p.returncode, out, got) == (0, b"alive\n", []), (p.returncode, out, got)
	EOF
'

test_expect_success 'a caller that blocks SIGCHLD (it reads it from a signalfd): memprov still sees the end' '
	st=0 && timeout 20 env --block-signal=CHLD "$MEMPROV_CLI" run -o bc.trace -- sleep 0.1 2>/dev/null || st=$? &&
	test $st = 0
'

test_expect_success '--check: a child its parent kills with SIGKILL (a timeout) is not gated when no OOM kill ran; --reachable gates it' '
	# a SIGKILL leaves no scan: all the child held was gated, and every
	# test suite that times a child out failed (Python'"'"'s subprocess
	# kills with SIGKILL: test.test_subprocess; a helper'"'"'s sweep)
	oom() { awk "/^oom_kill / { print \$2 }" /proc/vmstat; } &&
	o0=$(oom) &&
	st=0 && timeout 60 "$MEMPROV_CLI" run -d kd --check --children -- \
		sh -c "\"$BIN/steps\" steps.log 10 & p=\$!; sleep 0.3; kill -9 \$p; wait \$p; true" >kd.out 2>kd.err || st=$? &&
	cat kd.err &&
	if test "$(oom)" != "$o0"
	then
		echo "an OOM kill ran meanwhile: the child is gated, as it must be then"
	else
		test $st = 0 &&
		grep -q "not gated: its end was seen by no hook (killed by SIGKILL, as a parent'"'"'s timeout does, or a raw exit system call), and the OOM killer ended no process while the command ran: no scan, no verdict" kd.err &&
		# the child by its command (the shell'"'"'s own line holds the same words)
		killed=$(for t in kd/memprov.*.trace; do
			if "$MEMPROV_CLI" stats "$t" | grep -q "^pid: [0-9]*, command: $BIN/steps "; then
				echo "$t"
			fi
		done) && test -n "$killed" &&
		test_status 1 "$MEMPROV_CLI" check --reachable "$killed" >kr.out &&
		grep -q "FAIL" kr.out
	fi
'

# a helper's sweep: memprov's own "trace written" line and the gate's
# report killed it by SIGPIPE where its stderr's reader had gone (141,
# the command's 0 and the verdict lost); the command keeps its own
# disposition (yes | head: memprov dies of SIGPIPE with yes, as bare)
test_expect_success 'a closed stderr pipe: run exits with the command status, not SIGPIPE' '
	cat >pipe.sh <<-\EOF &&
	set -o pipefail 2>/dev/null || exit 0
	"$MEMPROV_CLI" run --check -o pp.trace -- sleep 0.2 2>&1 | true
	echo "gate $?"
	"$MEMPROV_CLI" run -o py.trace -- yes 2>/dev/null | head -1 >/dev/null
	echo "yes $?"
	EOF
	MEMPROV_CLI="$MEMPROV_CLI" bash pipe.sh >out &&
	printf "gate 0\nyes 141\n" >expect && test_cmp expect out
'

test_done
