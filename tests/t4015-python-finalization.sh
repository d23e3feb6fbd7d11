#!/bin/sh
# t4015: memprov marks the end of a Python program's main module without
# running the program's code at another time than bare. The mark once
# came from memprov's atexit callback, which first flushed sys.stdout and
# collected garbage itself: finalizers ran before sys.is_finalizing()
# was true (a __del__ that stays quiet at shutdown printed, a
# generator's finally saw False) and a program's own sys.stdout object
# was flushed once more. The mark now waits for CPython's own
# finalization: after its flush, its collection and its sys.last_*
# cleanup, before any module is torn down. What the program kept is
# still judged at that mark; with gc disabled (no collection in
# finalization) memprov collects there, where an enabled gc would have.
. "$(dirname "$0")/test-lib.sh"


cat >"$TRASH/fin.py" <<\EOF2
import sys
class Quiet:
    def __init__(self):
        self.me = self
    def __del__(self):
        print("del, finalizing:", sys.is_finalizing())
def gen():
    try:
        yield 1
    finally:
        print("finally, finalizing:", sys.is_finalizing())
def make():
    Quiet()
make()
g = gen()
next(g)
class Counted:
    def __init__(self):
        self.n = 0
    def write(self, s):
        return sys.__stdout__.write(s)
    def flush(self):
        self.n += 1
        sys.__stderr__.write("flush %d\n" % self.n)
sys.stdout = Counted()
print("end")
EOF2

# gc disabled: 1,000 objects that point at themselves, made in a function
cat >"$TRASH/nogc.py" <<\EOF2
import gc, sys
gc.disable()
class Node:
    def __init__(self):
        self.me = self
        self.pad = bytearray(1000)
def make():
    for _ in range(1000):
        Node()
make()
kept = []
def hold():
    for _ in range(40):
        kept.append(bytearray(3000))
if sys.argv[1:] == ["keep"]:
    hold()
print("made")
EOF2

# an uncaught exception stops a frame holding 2 MB
cat >"$TRASH/raise.py" <<\EOF2
def work():
    big = bytearray(2_000_000)
    raise SystemExit("stopped")
work()
EOF2

pythons() { test_pythons 3.9.18 3.10.13 3.11.7 3.12.1 3.13.0; }

test_expect_success 'finalizers, generators and the program s own stdout: the same output as bare, gate ok' '
	pythons >pys
	n=0
	while read -r py; do
		n=$((n + 1))
		"$py" fin.py >bare.out 2>bare.err
		st=0 && memprov run -d "d$n" --check -- "$py" fin.py >mp.out 2>mp.err || st=$?
		cat mp.err
		[ "$st" = 0 ]
		grep -v "^memprov\|^  " mp.err >mp.progerr || :
		test_cmp bare.out mp.out
		test_cmp bare.err mp.progerr
		grep -q "del, finalizing: True" mp.out
		grep -q "finally, finalizing: True" mp.out
		[ "$(grep -c "^flush" mp.progerr)" = 2 ]
	done <pys
	[ "$n" -ge 2 ]
'

test_expect_success 'gc disabled: the cycles left to finalization are not counted; what the program keeps is' '
	pythons >pys
	while read -r py; do
		rm -rf d d2
		st=0 && memprov run -d d --check -- "$py" nogc.py >out 2>err || st=$?
		cat err
		[ "$st" = 0 ]
		grep -q "^made" out
		st=0 && memprov run -d d2 --check -- "$py" nogc.py keep >out 2>err || st=$?
		cat err
		[ "$st" = 23 ]
		grep -q "in hold at .*nogc.py:$(grep -n "kept.append" nogc.py | cut -d: -f1)$" err
		not grep -q "nogc.py:$(grep -n "bytearray(1000)" nogc.py | cut -d: -f1)" err
	done <pys
'

test_expect_success 'an uncaught exception: the frame it stopped is freed before the mark (status 1 kept)' '
	pythons >pys
	while read -r py; do
		rm -rf d
		st=0 && memprov run -d d --check -- "$py" raise.py >out 2>err || st=$?
		cat err
		[ "$st" = 1 ]
		grep -q "^stopped" err
		grep -q ": ok" err
	done <pys
'

test_done
