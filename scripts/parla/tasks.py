"""
tasks.py - the runtime object and the tasks that use PArrays.

A task names the PArrays it reads and writes and the device it runs on.
Running it acquires every PArray on that device (a read fetches a valid
copy; a write also invalidates the other copies), runs its kernel, and
releases them, after which the eviction manager may evict those copies.
run_task_graph() is the user's per-iteration call: one task per PArray of
a group, writing every write_every-th array and reading the others.
"""
from .eviction import EvictionManager


class Runtime:
    """Backend, eviction manager and the write-back policy, shared by PArrays."""

    def __init__(self, backend, budgets, fresh_write_back):
        self.backend = backend
        self.manager = EvictionManager(budgets)
        self.fresh_write_back = fresh_write_back   # True: the upstream bug
        self.write_backs = 0
        self.tasks_run = 0


class Task:
    def __init__(self, name, device, reads=(), writes=(), deps=()):
        self.name = name
        self.device = device
        self.reads = list(reads)
        self.writes = list(writes)
        self.deps = list(deps)
        self.checksum = 0.0

    def run(self, runtime):
        for pa in self.reads:
            pa.acquire(self.device, write=False)
        for pa in self.writes:
            pa.acquire(self.device, write=True)
        try:
            for pa in self.reads:
                self.checksum += runtime.backend.kernel(pa.buffer(self.device),
                                                        write=False)
            for pa in self.writes:
                self.checksum += runtime.backend.kernel(pa.buffer(self.device),
                                                        write=True)
        finally:
            for pa in self.reads + self.writes:
                pa.release(self.device)
        runtime.tasks_run += 1


def build_task_graph(group, ngpus, write_every, label="g"):
    """One task per PArray: array j on GPU j % ngpus, written if j % write_every == 0."""
    tasks = []
    for j, pa in enumerate(group):
        write = j % write_every == 0
        tasks.append(Task("%s.t%d" % (label, j), j % ngpus,
                          reads=() if write else (pa,),
                          writes=(pa,) if write else ()))
    return tasks


def run_task_graph(runtime, group, ngpus=1, write_every=1, label="g"):
    """Run one group's task graph to completion, in dependency order."""
    done = set()
    pending = build_task_graph(group, ngpus, write_every, label)
    while pending:
        ready = [t for t in pending if all(d in done for d in t.deps)]
        if not ready:
            raise RuntimeError("task graph has a cycle")
        for t in ready:
            t.run(runtime)
            done.add(t)
        pending = [t for t in pending if t not in done]
    return len(done)
