"""pool_tasks.py - a fork-per-task pool: N tasks on a pool of 4 workers,
each worker replaced after one task (maxtasksperchild=1), so the run
writes one trace per task plus the parent's. Every 8th task keeps 64 kB in
a module global (the leak the merged report names); the others allocate
and free. For bench/many.sh: python3 pool_tasks.py N."""
import multiprocessing as mp
import sys

kept = []


def task(i):
    data = [bytearray(4096) for _ in range(64)]
    if i % 8 == 0:
        kept.append(bytearray(65536))   # the leaking line
    return sum(len(d) for d in data)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 255
    with mp.get_context("fork").Pool(4, maxtasksperchild=1) as pool:
        total = sum(pool.map(task, range(n), chunksize=1))
    print("tasks", n, "bytes", total)
