#!/bin/sh
# t4014: a daemon thread still running when the main module ends holds
# what its running frames hold (a polling loop's buffer, overwritten on
# each pass): that is not memory the program left behind, and a clean
# program with such a thread failed the gate at the thread's line. The
# main thread now records, just before the mark, every other thread
# still running Python code and its frames (MP_REC_PYTHREAD); a block
# that such a thread allocated in a frame still running then is set
# apart. What a daemon thread keeps still fails at its line: a loop that
# appends to a global on each pass (more than a few blocks of one line),
# and what a function it returned from put in a global.
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

for py in /usr/bin/python3 $PYENV/3.10.13/bin/python3 $PYENV/3.12.1/bin/python3 \
	  $PYENV/3.13.0/bin/python3; do
	command -v "$py" >/dev/null || continue
	export py
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
	test_expect_success "$py: what a function the daemon thread returned from kept still fails at its line" '
		rm -rf r &&
		timeout 120 "$MEMPROV_CLI" run -d r -- "$py" ret.py >/dev/null 2>&1 &&
		! "$MEMPROV_CLI" check r >r.check &&
		grep "#1 heap malloc: 4.9 KiB in 1 block live at the end of the main module in keep at .*ret.py:5$" r.check
	'
done

test_done
