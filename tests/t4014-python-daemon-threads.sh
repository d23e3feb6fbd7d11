#!/bin/sh
# t4014: a daemon thread still running when the main module ends holds
# what its running frames hold (a polling loop's buffer, overwritten on
# each pass): that is not memory the program left behind, and a clean
# program with such a thread failed the gate at the thread's line. The
# main thread now records, just before the mark, every other thread
# still running Python code and its frames (MP_REC_PYTHREAD); the newest
# two live blocks of a line that such a thread (told by its tid: CPython
# 3.11 and later) allocated in a frame still running then are set apart
# (the local and the value the line makes until it is stored: a thread
# that spins with no sleep had both live). What a daemon thread keeps
# still fails at its line: a loop that appends to a global on each pass
# (all but the two newest), what a function it
# returned from put in a global, what an earlier call of the function it
# is in again kept, and a leak of a thread that ended, running the same
# function as a daemon thread (3.10 included, where no thread is told).
# And no scan at exit in CPython's executable: threads of a C library
# that take the interpreter lock in a loop crashed on its freed state in
# 6 of 10 exits while the scan ran (none bare).
. "$(dirname "$0")/test-lib.sh"

PYENV=/root/.pyenv/versions
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }

# the threads signal once they have been round their loop at least once
cat >"$TRASH/poll.py" <<\EOF
import threading, queue, time
q = queue.Queue()
ready = [threading.Event(), threading.Event()]
stop = threading.Event()
def poll():
    while True:
        buf = bytearray(1_000_000)
        buf[0] = 1
        ready[0].set()
        stop.wait(0.01)
def watch():
    while not stop.wait(0.01):
        data = {"k": list(range(100))}
        ready[1].set()
for f in (poll, watch):
    threading.Thread(target=f, daemon=True).start()
for e in ready:
    e.wait()
print("done")
EOF

cat >"$TRASH/keep.py" <<\EOF
import threading, time
cache = []
def poll():
    while True:
        cache.append(bytearray(1000))
        time.sleep(0.001)
threading.Thread(target=poll, daemon=True).start()
while len(cache) < 50:
    time.sleep(0.01)
EOF

cat >"$TRASH/ret.py" <<\EOF
import threading, time
kept = []
started = threading.Event()
def keep():
    kept.append(bytearray(5000))
def poll():
    keep()
    started.set()
    while True:
        time.sleep(0.01)
threading.Thread(target=poll, daemon=True).start()
started.wait()
EOF

# three daemon threads making a buffer with no pause: each lets the
# interpreter lock go between making one and storing it
cat >"$TRASH/spin.py" <<\EOF
import threading, time
def spin():
    while True:
        buf = bytearray(20000)
for i in range(3):
    threading.Thread(target=spin, daemon=True).start()
time.sleep(0.2)
EOF

# five daemon threads polling with a buffer each
cat >"$TRASH/five.py" <<\EOF
import threading
stop = threading.Event()
ready = [threading.Event() for _ in range(5)]
def poll(i):
    while True:
        buf = bytearray(100_000)
        ready[i].set()
        stop.wait(0.01)
for i in range(5):
    threading.Thread(target=poll, args=(i,), daemon=True).start()
for e in ready:
    e.wait()
EOF

# the worker is in process_next again, waiting, when the main module ends
cat >"$TRASH/again.py" <<\EOF
import threading, queue
q = queue.Queue()
seen = []
done = threading.Event()
def process_next():
    item = q.get()
    seen.append(bytearray(item))
    done.set() if len(seen) == 3 else None
def worker():
    while True:
        process_next()
threading.Thread(target=worker, daemon=True).start()
for n in (5000, 6000, 7000):
    q.put(n)
done.wait()
EOF

# a joined thread leaks in worker; a daemon thread runs worker at the end
cat >"$TRASH/ended.py" <<\EOF
import threading, time
kept = []
started = threading.Event()
def worker(daemon):
    if not daemon:
        kept.append(bytearray(50000))
        return
    started.set()
    while True:
        time.sleep(0.01)
t = threading.Thread(target=worker, args=(False,))
t.start()
t.join()
threading.Thread(target=worker, args=(True,), daemon=True).start()
started.wait()
EOF

# Threads of a C library (loaded with ctypes, no Python headers needed)
# that call back into Python in a loop, each call taking the interpreter
# lock with PyGILState_Ensure: still running when the interpreter has
# been finalized, before the process ends.
cat >"$TRASH/gilloop.c" <<\EOF
#include <pthread.h>
extern int PyGILState_Ensure(void);
extern void PyGILState_Release(int);
extern void *PyObject_CallNoArgs(void *);
extern void Py_IncRef(void *), Py_DecRef(void *), PyErr_Clear(void);
static void *cb;
static void *loop(void *a)
{
	(void)a;
	for (;;) {
		int s = PyGILState_Ensure();
		void *r = PyObject_CallNoArgs(cb);
		if (r)
			Py_DecRef(r);
		PyErr_Clear();
		PyGILState_Release(s);
	}
	return 0;
}
void start(void *f, int n)
{
	pthread_t t;
	Py_IncRef(f);
	cb = f;
	while (n-- > 0)
		if (!pthread_create(&t, 0, loop, 0))
			pthread_detach(t);
}
EOF
cat >"$TRASH/gilloop.py" <<\EOF
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1])
lib.start.argtypes = [ctypes.py_object, ctypes.c_int]
def cb():
    return [i for i in range(20)]
lib.start(cb, 4)
time.sleep(0.2)
print("done")
EOF

# With the scan at exit, 6 of 10 traced exits crashed (0 of 10 bare). The
# race is CPython's own: 3.12 and 3.13 crash as often bare, and 3.11 now
# and then when traced: 0 of 130 by hand once; on Dec 6, through `memprov
# run`, 1 of 60 with ca0db7d's library and 1 of 60 with 1604a44's (0 of 40
# bare), and 2 of 10 in a full test run under load, which failed the old
# bound of at most 1 in 10. 20 exits, at most 4 crashes: a 5% rate gives
# 5 or more in 0.3% of runs, a 6-in-10 rate 4 or fewer in 0.03%.
test_expect_success "C threads taking the interpreter lock in a loop at exit: no scan at exit, exit 0 as bare" '
	cc -shared -fPIC -O1 -o gilloop.so gilloop.c -lpthread &&
	for i in 1 2 3; do /usr/bin/python3 gilloop.py ./gilloop.so >bare.out && break; done &&
	test -s bare.out &&
	rm -rf gl && mkdir gl && crashed=0 && for i in $(seq 20); do
		if "$MEMPROV_CLI" run -d gl/$i -- /usr/bin/python3 gilloop.py ./gilloop.so >gl.$i.out 2>gl.$i.err; then
			test_cmp bare.out gl.$i.out || exit 1
		else
			cat gl.$i.err; crashed=$((crashed + 1))
		fi
	done &&
	echo "crashed: $crashed of 20" && test $crashed -le 4 &&
	ok=$(for i in $(seq 20); do test -s gl.$i.out && { echo $i; break; }; done) &&
	"$MEMPROV_CLI" dump gl/$ok/*.trace >gl.dump &&
	if ! grep " reach status=off notes=0x80 " gl.dump; then
		# say what the trace holds instead (a CI run once failed here)
		ls -l gl/$ok; grep -E " (reach|exit|death|pythread) " gl.dump; tail -n 5 gl.dump
		"$MEMPROV_CLI" stats gl/$ok/*.trace; cat gl.$ok.err; exit 1
	fi &&
	"$MEMPROV_CLI" leaks gl/$ok/*.trace >gl.leaks &&
	grep "^reachability at exit: not computed: no scan at exit: a Python program, judged on what is live at the end of its main module$" gl.leaks
'

# a daemon thread's loop that builds a list with a comprehension on each
# pass (a frame of its own before 3.12), and one that appends such a list
# to a global on each pass
cat >"$TRASH/comp.py" <<\EOF
import threading
ready = threading.Event()
stop = threading.Event()
def poll():
    while True:
        x = [i * 2 for i in range(300)]
        ready.set()
        stop.wait(0.001)
threading.Thread(target=poll, daemon=True).start()
ready.wait()
stop.wait(0.05)
EOF
cat >"$TRASH/compkeep.py" <<\EOF
import threading, time
cache = []
def poll():
    while True:
        cache.append([i * 2 for i in range(300)])
        time.sleep(0.001)
threading.Thread(target=poll, daemon=True).start()
while len(cache) < 50:
    time.sleep(0.01)
EOF

# a daemon thread whose loop stores what a call returns: an open file,
# which the interpreter makes of two blocks of its own (a 32 B lock and
# the buffer), both from the call's line; the second call waits before
# it returns, so the loop's local still holds the first file. And one
# that keeps every file it opens.
cat >"$TRASH/reopen.py" <<\EOF
import threading
ready = threading.Event()
hold = threading.Event()
calls = 0
def make():
    global calls
    g = open(__file__, "rb")
    calls += 1
    if calls == 2:
        ready.set()
        hold.wait()
    return g
def worker():
    f = None
    while True:
        f = make()
threading.Thread(target=worker, daemon=True).start()
ready.wait()
EOF
cat >"$TRASH/keepfiles.py" <<\EOF
import threading
ready = threading.Event()
hold = threading.Event()
kept = []
def make():
    kept.append(open(__file__, "rb"))
    if len(kept) == 3:
        ready.set()
        hold.wait()
def worker():
    while True:
        make()
threading.Thread(target=worker, daemon=True).start()
ready.wait()
EOF

# six daemon threads started in a function (each Thread object keeps
# what threading made for it), and six blocks of 3,000 B the function keeps
cat >"$TRASH/sixfn.py" <<\EOF
import threading, time, sys
kept = []
def worker():
    while True:
        time.sleep(0.01)
def start(keep):
    for _ in range(6):
        threading.Thread(target=worker, daemon=True).start()
        if keep:
            kept.append(bytearray(3000))
start(sys.argv[1:] == ["keep"])
time.sleep(0.05)
EOF

for py in /usr/bin/python3 $PYENV/3.10.13/bin/python3 $PYENV/3.12.1/bin/python3 \
	  $PYENV/3.13.0/bin/python3; do
	command -v "$py" >/dev/null || continue
	export py
	test_expect_success "$py: a leak of a thread that ended, in the function a daemon thread runs, still fails" '
		rm -rf e &&
		timeout 120 "$MEMPROV_CLI" run -d e -- "$py" ended.py >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check e >e.check &&
		grep "#1 heap malloc: 48.8 KiB in 1 block live at the end of the main module in worker at .*ended.py:6$" e.check
	'
	test_expect_success "$py: six daemon threads started in a function pass; six small blocks it keeps fail" '
		rm -rf six sixk &&
		timeout 120 "$MEMPROV_CLI" run -d six -- "$py" sixfn.py >/dev/null 2>&1 &&
		"$MEMPROV_CLI" check six >six.check &&
		grep "live at the end of the main module: 0 B in 0 blocks" six.check &&
		timeout 120 "$MEMPROV_CLI" run -d sixk -- "$py" sixfn.py keep >/dev/null 2>&1 &&
		test_status 1 "$MEMPROV_CLI" check sixk >sixk.check &&
		grep "^    #1 heap malloc: [0-9.]* KiB in 6 blocks live at the end of the main module in start at .*sixfn.py:10$" sixk.check &&
		test "$(grep -c "^    #" sixk.check)" = 1
	'
	case $py in *3.10*) continue ;; esac # no thread told there: nothing set apart
	test_expect_success "$py: daemon threads polling with a 1 MB buffer and a dict: the gate passes" '
		rm -rf p &&
		timeout 120 "$MEMPROV_CLI" run -d p -- "$py" poll.py >p.out 2>p.err &&
		echo done >expect && test_cmp expect p.out &&
		"$MEMPROV_CLI" check p >p.check &&
		grep "live at the end of the main module: 0 B in 0 blocks" p.check &&
		grep "held by frames still running in other threads (daemon threads): [0-9]* blocks, [0-9.]* [KM]iB" p.check &&
		"$MEMPROV_CLI" dump p/*.trace >p.dump &&
		test $(grep -c " pythread " p.dump) = 2 &&
		"$MEMPROV_CLI" leaks --json p/*.trace >p.json &&
		test $(jget p.json set_apart.state.running.bytes) -ge 1000000
	'
	test_expect_success "$py: a daemon thread that appends to a global on each pass still fails at its line" '
		rm -rf k &&
		timeout 120 "$MEMPROV_CLI" run -d k -- "$py" keep.py >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check k >k.check &&
		grep "#1 heap malloc: .* in [0-9]* blocks live at the end of the main module in poll at .*keep.py:5$" k.check
	'
	test_expect_success "$py: five daemon threads polling with a buffer each: the gate passes" '
		rm -rf f &&
		timeout 120 "$MEMPROV_CLI" run -d f -- "$py" five.py >/dev/null 2>&1 &&
		"$MEMPROV_CLI" check f >f.check &&
		grep "held by frames still running in other threads (daemon threads): .*, 48[0-9].[0-9] KiB" f.check
	'
	test_expect_success "$py: what an earlier call of the function the thread is in again kept fails, all but the two newest" '
		rm -rf g &&
		timeout 120 "$MEMPROV_CLI" run -d g -- "$py" again.py >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check g >g.check &&
		grep "#1 heap malloc: 4.9 KiB in 1 block live at the end of the main module in process_next at .*again.py:7$" g.check
	'
	test_expect_success "$py: three daemon threads making buffers with no pause: the gate passes (3 runs)" '
		for i in 1 2 3; do
			rm -rf s &&
			timeout 120 "$MEMPROV_CLI" run -d s -- "$py" spin.py >/dev/null 2>&1 &&
			"$MEMPROV_CLI" check s >s.check || { cat s.check; exit 1; }
		done
	'
	test_expect_success "$py: what a function the daemon thread returned from kept still fails at its line" '
		rm -rf r &&
		timeout 120 "$MEMPROV_CLI" run -d r -- "$py" ret.py >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check r >r.check &&
		grep "#1 heap malloc: 4.9 KiB in 1 block live at the end of the main module in keep at .*ret.py:5$" r.check
	'
	case $py in
	*3.10*) continue ;; # no thread is told on 3.10
	esac
	test_expect_success "$py: a list a comprehension makes in a daemon thread's loop, held by a local: the gate passes" '
		rm -rf c &&
		timeout 120 "$MEMPROV_CLI" run -d c -- "$py" comp.py >/dev/null 2>&1 &&
		"$MEMPROV_CLI" check c >c.check || { cat c.check; exit 1; }
	'
	test_expect_success "$py: a daemon thread that holds an open file while its call makes the next: the gate passes" '
		rm -rf of &&
		timeout 120 "$MEMPROV_CLI" run -d of -- "$py" reopen.py >/dev/null 2>&1 &&
		"$MEMPROV_CLI" check of >of.check &&
		grep "live at the end of the main module: 0 B in 0 blocks" of.check &&
		"$MEMPROV_CLI" leaks --json of/*.trace >of.json &&
		test $(jget of.json set_apart.state.running.blocks) -ge 4
	'
	test_expect_success "$py: one that keeps every file it opens fails with the oldest file, its lock and its buffer" '
		rm -rf kf &&
		timeout 120 "$MEMPROV_CLI" run -d kf -- "$py" keepfiles.py >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check kf >kf.check &&
		grep "#1 heap malloc: [0-9.]* KiB in 2 blocks live at the end of the main module in make at .*keepfiles.py:6$" kf.check &&
		test "$(grep -c "^    #" kf.check)" = 1
	'
	test_expect_success "$py: such lists appended to a global on each pass fail, all but the two newest" '
		rm -rf ck &&
		timeout 120 "$MEMPROV_CLI" run -d ck -- "$py" compkeep.py >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check ck >ck.check && cat ck.check &&
		grep "^  held by frames still running in other threads (daemon threads): 2 blocks" ck.check &&
		grep "#1 heap realloc: .* in [0-9]* blocks live at the end of the main module in poll.* at .*compkeep.py:5$" ck.check
	'
done

test_done
