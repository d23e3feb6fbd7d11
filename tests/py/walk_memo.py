# walk_memo.py - stacks that a memo of a thread's last Python frames
# (python_walk.c) could get wrong (t4040). Each kept buffer has a size of
# its own; the "# TAG" comments mark the lines its stack must name.
import threading

keep = []

# Code objects freed and made again, mostly at the addresses the last
# ones had, with the same file name, function name and first line but
# other lines: the I-th gen.py allocates at its line I + 2, called from
# its line I + 3. A thread of its own compiles each one after the last
# one has gone, so that the thread that runs them records nothing
# between two of them (two locks hand over: a Condition would allocate).
ready, done = threading.Lock(), threading.Lock()  # no Condition: no allocation
ready.acquire()
done.acquire()
box = [None]  # no list grows or shrinks between two runs: no allocation there
ids = [0] * 40


def compiler():
    for i in range(40):
        src = "def f():\n" + "\n" * i + "    keep.append(bytearray(%d))\nf()\n" % (2_100_000 + i)
        box[0] = compile(src, "gen.py", "exec")
        ready.release()
        done.acquire()


def runner():
    for i in range(40):
        ready.acquire()
        code, box[0] = box[0], None
        ids[i] = id(code)
        space = {"keep": keep}
        exec(code, space)  # EXEC
        space.clear()  # f and its code go now, not at a collection
        del code
        done.release()


pair = [threading.Thread(target=compiler), threading.Thread(target=runner)]
for t in pair:
    t.start()
for t in pair:
    t.join()


def grab(n):
    keep.append(bytearray(n))  # GRAB


def two_lines(k):
    grab(2_200_000 + k)  # FIRST
    grab(2_300_000 + k)  # SECOND


for k in range(3):
    two_lines(k)  # TWO


def gen():
    yield grab(2_400_001)  # YIELD-1
    yield grab(2_400_002)  # YIELD-2


for _ in gen():  # GEN
    pass


# Two threads taking turns, each at a depth of its own, allocating
# between their kept buffers what they drop.
turn = threading.Condition()
state = {"next": 0}


def worker(me, depth):
    if depth:
        return worker(me, depth - 1)  # DOWN
    for j in range(300):
        with turn:
            while state["next"] != me:
                turn.wait()
            bytearray(5000)  # DROP
            if j % 100 == 0:
                grab(2_500_000 + me * 1000 + j // 100)  # KEEP
            state["next"] = 1 - me
            turn.notify_all()


threads = [threading.Thread(target=worker, args=(me, 10 + 20 * me)) for me in (0, 1)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(keep), "reused" if len(set(ids)) < 40 else "fresh")
