"""mp_grow.py - 4 forked workers, 12 steps each (a mark per call of step):
workers 1 and 3 keep 100 kB more each step on the same line, the others
keep nothing. For t2138-merge.sh."""
import multiprocessing as mp

kept = []


def step(i, grows):
    if grows:
        kept.append(bytearray(100_000))   # the growing line
    else:
        bytearray(100_000)


def work(w):
    for i in range(12):
        step(i, w in (1, 3))


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=work, args=(w,)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    print("exit codes", [p.exitcode for p in procs])
