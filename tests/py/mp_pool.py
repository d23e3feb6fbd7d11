"""mp_pool.py - a multiprocessing pool of 4 forked workers, one task each;
the task of worker 2 keeps 3 blocks of 4 MB in a module global list (the
worker process ends with them held), the others free what they make.
For t2137-many-traces.sh."""
import multiprocessing as mp
import os

kept = []


def task(i):
    if i == 2:
        for _ in range(3):
            kept.append(bytearray(4_000_000))   # the leaking line
    else:
        bytearray(4_000_000)
    return os.getpid()


if __name__ == "__main__":
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=task, args=(i,)) for i in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    print("exit codes", [p.exitcode for p in procs])
