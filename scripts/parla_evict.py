#!/usr/bin/python3
"""
parla_evict.py - the Parla PArray eviction leak, reproduced.

The user preallocates groups of float32 arrays, wraps each in a PArray
(without copying) and runs one group's task graph per iteration on a GPU
whose budget holds only some of the groups:

    for i in range(iters): run_task_graph(groups[i % groups])

Once the GPU is full, every new copy evicts the least recently used one.
In --bug mode (the default, as upstream) evicting a Modified copy writes it
back into a NEW host array while the user's list still holds the old one:
host memory grows by one array per dirty eviction. --fixed writes back into
the host buffer already held. One memprov mark per iteration; per-iteration
RSS lines; a summary with the figures a test needs (and --json-summary).

Run with Debian's /usr/bin/python3 (numpy; psutil if present). Exit status:
0 done, 1 runtime or CUDA error, 2 usage, 3 out of host memory (MemoryError).
"""
import argparse
import json
import os
import sys
import time

sys.dont_write_bytecode = True    # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from parla import (PArray, Runtime, run_task_graph, make_backend,  # noqa: E402
                   memprov_mark, write_back_site, BackendError,
                   DeviceOutOfMemory)
from parla.marks import memprov_present  # noqa: E402

EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_NOMEM = 0, 1, 2, 3
DEFAULT_BUDGET_GROUPS = 10      # eviction starts near iteration 10


def parse_size(text):
    """Bytes from '8000000', '320M', '40G' (powers of 1000) or '1GiB' (1024)."""
    t = text.strip()
    units = {"KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40,
             "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12,
             "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "B": 1}
    for suffix in sorted(units, key=len, reverse=True):
        if t.upper().endswith(suffix):
            num = t[:-len(suffix)]
            break
    else:
        suffix, num = "B", t
    try:
        value = float(num)
    except ValueError:
        raise argparse.ArgumentTypeError("not a size: '%s'" % text) from None
    if value < 0:
        raise argparse.ArgumentTypeError("negative size: '%s'" % text)
    return int(value * units[suffix])


def positive(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not an integer: '%s'" % text) from None
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1: '%s'" % text)
    return v


def human(n):
    """Decimal units, as the report printed them: 1.23 GB, 16.0 MB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= scale:
            return "%.*f %s" % (2 if unit == "GB" else 1, n / scale, unit)
    return "%d B" % n


def rss_bytes():
    try:
        import psutil
        return psutil.Process().memory_info().rss
    except ImportError:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def vm_peak_bytes():
    """VmPeak: the most address space this process has held (for prlimit --as)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="parla_evict.py",
        description="Reproduce the Parla PArray eviction leak (host memory "
        "grows by one array per dirty eviction in --bug mode).")
    m = p.add_mutually_exclusive_group()
    m.add_argument("--bug", dest="mode", action="store_const", const="bug",
                   help="evict writes back into a new host array (default)")
    m.add_argument("--fixed", dest="mode", action="store_const", const="fixed",
                   help="evict writes back into the host buffer held")
    p.set_defaults(mode="bug")
    p.add_argument("--backend", choices=("host", "cudart", "cupy"),
                   default="host", help="where device copies live (host)")
    p.add_argument("--cudart", metavar="PATH",
                   help="libcudart for --backend cudart (default "
                   "$MEMPROV_CUDART, else /usr/local/cuda/lib64/libcudart.so)")
    p.add_argument("--no-device-pool", action="store_true",
                   help="free device blocks at once instead of caching them")
    p.add_argument("--no-pinned-pool", action="store_true",
                   help="free pinned staging blocks at once")
    p.add_argument("--groups", type=positive, default=20,
                   help="groups of arrays; iteration i uses group i %% groups (20)")
    p.add_argument("--arrays-per-group", type=positive, default=3,
                   help="arrays (PArrays, tasks) per group (3)")
    p.add_argument("--rows", type=positive, default=1000000, help="(1000000)")
    p.add_argument("--cols", type=positive, default=2,
                   help="float32 columns: 1000000 x 2 = 8 MB (2)")
    p.add_argument("--iters", type=positive, default=20, help="(20)")
    p.add_argument("--gpus", type=positive, default=1,
                   help="GPUs 0..N-1; array j runs on GPU j %% N (1)")
    p.add_argument("--gpu-budget", type=parse_size, metavar="BYTES",
                   help="bytes per GPU for PArray copies (default: %d groups' "
                   "worth, so eviction starts at iteration %d)" %
                   (DEFAULT_BUDGET_GROUPS, DEFAULT_BUDGET_GROUPS))
    p.add_argument("--write-every", type=positive, default=1, metavar="K",
                   help="task j writes its array when j %% K == 0, reads it "
                   "otherwise (1: every task writes)")
    p.add_argument("--seed", type=int, default=0, help="data seed (0)")
    p.add_argument("--mark-label", default="iter %d",
                   help="memprov mark label, %%d = iteration ('iter %%d')")
    p.add_argument("--json-summary", metavar="FILE",
                   help="write the summary figures as JSON to FILE")
    p.add_argument("--plan", action="store_true",
                   help="print the predicted figures and exit, allocating "
                   "nothing")
    p.add_argument("--pause-after", type=int, metavar="K",
                   help="after printing iteration K, sleep up to 600 s before "
                   "going on: a test kills the process there, at a known "
                   "point, as the OOM killer would")
    p.add_argument("--free-at-end", action="store_true",
                   help="drop every array and pool before exiting (default: "
                   "keep them referenced until interpreter exit)")
    args = p.parse_args(argv)
    args.array_bytes = args.rows * args.cols * np.dtype(np.float32).itemsize
    if args.gpus > args.arrays_per_group:
        p.error("--gpus %d needs at least as many --arrays-per-group" %
                args.gpus)
    if args.gpu_budget is None:
        per_gpu = -(-args.arrays_per_group // args.gpus)
        args.gpu_budget = DEFAULT_BUDGET_GROUPS * per_gpu * args.array_bytes
    if args.gpu_budget < args.array_bytes:
        p.error("--gpu-budget %d is smaller than one array (%d bytes)" %
                (args.gpu_budget, args.array_bytes))
    return args


def predict(args):
    """
    Evictions, dirty evictions and leaked host arrays expected in each
    iteration, from the flags alone. On each GPU d, with A_d arrays per
    group (W_d of them written) and room for C_d copies, a copy is used
    once per round of groups and never again before it is evicted (when
    C_d < groups * A_d), so copies are evicted in the order they were
    loaded: through iteration i, max(0, (i+1) A_d - C_d) evictions. The
    first groups * A_d of them are each PArray's first: a dirty one then
    displaces the user's own array (a leak in bug mode); later dirty ones
    replace an earlier write-back copy, which is freed.
    """
    per = []
    for d in range(args.gpus):
        cols = [j for j in range(args.arrays_per_group) if j % args.gpus == d]
        written = [j % args.write_every == 0 for j in cols]
        per.append((len(cols), written, args.gpu_budget // args.array_bytes))

    def dirty_first(n, a_d, written):
        return (n // a_d) * sum(written) + sum(written[:n % a_d])

    def through(i):
        ev = dirty = leak = 0
        for a_d, written, c_d in per:
            if c_d >= args.groups * a_d or i < 0:
                continue
            e = max(0, (i + 1) * a_d - c_d)
            ev += e
            dirty += dirty_first(e, a_d, written)
            leak += dirty_first(min(e, args.groups * a_d), a_d, written)
        return ev, dirty, leak

    rows = []
    for i in range(args.iters):
        a, b = through(i), through(i - 1)
        rows.append(tuple(x - y for x, y in zip(a, b)))
    steady_dirty = sum(sum(w) for a_d, w, c_d in per
                       if c_d < args.groups * a_d)
    steady_ev = sum(a_d for a_d, w, c_d in per if c_d < args.groups * a_d)
    evicting = [(a_d, c_d) for a_d, w, c_d in per if c_d < args.groups * a_d]
    if evicting:
        first_eviction = min(c_d // a_d for a_d, c_d in evicting)
        steady_first = max(-(-c_d // a_d) for a_d, c_d in evicting)
        leak_last = min((args.groups * a_d + c_d) // a_d - 1
                        for a_d, c_d in evicting)
    else:
        first_eviction = steady_first = leak_last = None
    return {"per_iter": rows, "steady_evictions": steady_ev,
            "steady_dirty": steady_dirty, "first_eviction": first_eviction,
            "steady_first": steady_first, "leak_last": leak_last}


def slope(xs, ys):
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx


def preallocate(args):
    """The user's preallocated groups of host arrays."""
    rng = np.random.default_rng(args.seed)
    groups = []
    for g in range(args.groups):
        groups.append([rng.random((args.rows, args.cols), dtype=np.float32)
                       for _ in range(args.arrays_per_group)])
    return groups


class Workload:
    """Everything the run keeps alive: the user's lists, PArrays, runtime."""

    def __init__(self, args):
        self.args = args
        self.backend = make_backend(args.backend,
                                    device_pool=not args.no_device_pool,
                                    pinned_pool=not args.no_pinned_pool,
                                    cudart=args.cudart)
        self.rt = Runtime(self.backend,
                          {d: args.gpu_budget for d in range(args.gpus)},
                          fresh_write_back=(args.mode == "bug"))
        self.groups = preallocate(args)
        self.parrays = [[PArray(a, self.rt, "g%d.a%d" % (g, j))
                         for j, a in enumerate(group)]
                        for g, group in enumerate(self.groups)]
        self.iters = []    # per iteration: (rss, evictions, dirty, displaced)

    def displaced(self):
        """PArrays whose host copy is no longer the user's own array."""
        return sum(pa.host_array is not a
                   for group, pas in zip(self.groups, self.parrays)
                   for a, pa in zip(group, pas))

    def run(self):
        a = self.args
        man = self.rt.manager
        prev = rss_bytes()
        for i in range(a.iters):
            ev0, dirty0 = man.evictions, man.dirty_evictions
            run_task_graph(self.rt, self.parrays[i % a.groups], a.gpus,
                           a.write_every, label="g%d" % (i % a.groups))
            memprov_mark(a.mark_label % i if "%d" in a.mark_label
                         else a.mark_label)
            rss = rss_bytes()
            ev, dirty = man.evictions - ev0, man.dirty_evictions - dirty0
            self.iters.append((rss, ev, dirty, self.displaced()))
            print("iter %d: rss %s (%s%s), evictions %d (dirty %d)" %
                  (i, human(rss), "+" if rss >= prev else "-",
                   human(abs(rss - prev)), ev, dirty), flush=True)
            prev = rss
            if i == a.pause_after:
                time.sleep(600)

    def free(self):
        for pas in self.parrays:
            for pa in pas:
                pa.drop_device_copies()
        self.parrays = self.groups = None
        self.backend.close()


def summarize(w, pred, completed, site):
    a = w.args
    leak_per_array = 1 if a.mode == "bug" else 0
    expected = a.array_bytes * pred["steady_dirty"] * leak_per_array
    win = []
    if pred["steady_first"] is not None:
        last = min(pred["leak_last"], a.iters - 1)
        win = list(range(pred["steady_first"], last + 1))
    done = len(w.iters)
    pts = [i for i in win if i < done]
    rss_slope = slope(pts, [w.iters[i][0] for i in pts]) if len(pts) >= 3 \
        else None
    measured_ev = [x[1] for x in w.iters]
    measured_dirty = [x[2] for x in w.iters]
    predicted_ev = [r[0] for r in pred["per_iter"]]
    predicted_dirty = [r[1] for r in pred["per_iter"]]
    displaced = [x[3] for x in w.iters]
    measured_leaked = [b - a for a, b in zip([0] + displaced, displaced)]
    predicted_leaked = [r[2] * leak_per_array for r in pred["per_iter"]]
    return {
        "completed": completed,
        "mode": a.mode, "backend": a.backend,
        "device_pool": not a.no_device_pool,
        "pinned_pool": not a.no_pinned_pool,
        "groups": a.groups, "arrays_per_group": a.arrays_per_group,
        "rows": a.rows, "cols": a.cols, "dtype": "float32",
        "array_bytes": a.array_bytes, "iters": a.iters,
        "iters_done": done, "gpus": a.gpus, "write_every": a.write_every,
        "gpu_budget": a.gpu_budget,
        "arrays_per_gpu": a.gpu_budget // a.array_bytes,
        "first_eviction_iter": pred["first_eviction"],
        "steady_first_iter": pred["steady_first"],
        "leak_last_iter": pred["leak_last"],
        "steady_window": [win[0], win[-1]] if win else None,
        "evictions_per_iter_steady": pred["steady_evictions"],
        "dirty_evictions_per_iter_steady": pred["steady_dirty"],
        "expected_leak_bytes_per_iter": expected,
        "expected_leak_bytes_total": a.array_bytes * leak_per_array *
        sum(r[2] for r in pred["per_iter"]),
        "predicted_evictions": predicted_ev,
        "predicted_dirty": predicted_dirty,
        "evictions": measured_ev, "dirty_evictions": measured_dirty,
        "predicted_leaked_arrays": predicted_leaked,
        "leaked_arrays": measured_leaked,
        "prediction_matches": (measured_ev == predicted_ev[:done] and
                               measured_dirty == predicted_dirty[:done] and
                               measured_leaked == predicted_leaked[:done]),
        "displaced_host_arrays": w.iters[-1][3] if w.iters else 0,
        "rss": [x[0] for x in w.iters],
        "rss_slope_bytes_per_iter": rss_slope,
        "vm_peak_bytes": vm_peak_bytes(),
        "write_backs": w.rt.write_backs,
        "write_back_site": {"file": site[0], "line": site[1],
                            "function": site[2],
                            "qualname": "PArray." + site[2]},
        "mark_label": a.mark_label, "memprov_present": memprov_present(),
        "backend_stats": w.backend.stats(),
    }


def print_summary(s):
    out = ["summary: %s mode, %s backend, %d groups x %d arrays of %d x %d "
           "float32 (%d bytes each), %d of %d iterations done" %
           (s["mode"], s["backend"], s["groups"], s["arrays_per_group"],
            s["rows"], s["cols"], s["array_bytes"], s["iters_done"],
            s["iters"])]
    if s["steady_window"]:
        out.append("summary: gpu budget %d bytes = %d arrays per GPU; "
                   "evictions from iteration %d; iterations %d-%d: %d "
                   "evictions, %d dirty per iteration" %
                   (s["gpu_budget"], s["arrays_per_gpu"],
                    s["first_eviction_iter"], s["steady_window"][0],
                    s["steady_window"][1], s["evictions_per_iter_steady"],
                    s["dirty_evictions_per_iter_steady"]))
    else:
        out.append("summary: gpu budget %d bytes = %d arrays per GPU; no "
                   "steady eviction window in this run" %
                   (s["gpu_budget"], s["arrays_per_gpu"]))
    out.append("summary: expected leak %d bytes per iteration (array bytes "
               "%d x dirty evictions %d%s)" %
               (s["expected_leak_bytes_per_iter"], s["array_bytes"],
                s["dirty_evictions_per_iter_steady"],
                "" if s["mode"] == "bug" else " x 0: fixed mode"))
    if s["rss_slope_bytes_per_iter"] is not None:
        out.append("summary: measured rss slope %.0f bytes per iteration "
                   "over iterations %d-%d" %
                   (s["rss_slope_bytes_per_iter"], s["steady_window"][0],
                    min(s["steady_window"][1], s["iters_done"] - 1)))
    out.append("summary: evictions as predicted: %s; host arrays displaced "
               "from the user's list: %d" %
               ("yes" if s["prediction_matches"] else "NO",
                s["displaced_host_arrays"]))
    ws = s["write_back_site"]
    out.append("summary: write-back allocation at %s:%d (%s)" %
               (ws["file"], ws["line"], ws["qualname"]))
    print("\n".join(out), flush=True)


def print_plan(args, pred):
    """The figures a run with these flags will show, without running it."""
    leak = [r[2] if args.mode == "bug" else 0 for r in pred["per_iter"]]
    data = args.groups * args.arrays_per_group * args.array_bytes
    on_gpu = min(args.gpu_budget // args.array_bytes,
                 args.groups * args.arrays_per_group) * args.array_bytes
    print("plan: user arrays %d bytes (%s); device copies up to %d bytes per "
          "GPU%s" % (data, human(data), on_gpu,
                     " (host memory with --backend host)"
                     if args.backend == "host" else ""))
    if pred["steady_first"] is None:
        print("plan: everything fits on the GPU: no eviction")
        return
    print("plan: first eviction in iteration %d; from iteration %d: %d "
          "evictions, %d dirty per iteration" %
          (pred["first_eviction"], pred["steady_first"],
           pred["steady_evictions"], pred["steady_dirty"]))
    print("plan: host growth %d bytes per iteration over iterations %d-%d, "
          "%d bytes in all by iteration %d" %
          (args.array_bytes * pred["steady_dirty"] *
           (args.mode == "bug"), pred["steady_first"], pred["leak_last"],
           args.array_bytes * sum(leak), args.iters - 1))
    for i, (ev, dirty, lk) in enumerate(pred["per_iter"]):
        print("plan: iter %d: evictions %d (dirty %d), leaked arrays %d" %
              (i, ev, dirty, lk if args.mode == "bug" else 0))


def write_json(path, s):
    with open(path, "w") as f:
        json.dump(s, f, indent=1)
        f.write("\n")


def main(argv):
    args = parse_args(argv)
    pred = predict(args)
    print("parla_evict: %s mode, %s backend, %d groups x %d arrays of %s, "
          "gpu budget %s (%d arrays), %d iterations" %
          (args.mode, args.backend, args.groups, args.arrays_per_group,
           human(args.array_bytes), human(args.gpu_budget),
           args.gpu_budget // args.array_bytes, args.iters), flush=True)
    if args.plan:
        print_plan(args, pred)
        return None, EXIT_OK
    # Found before the run: reading the source (inspect, linecache) can
    # fail once host memory is exhausted.
    site = write_back_site()
    try:
        w = Workload(args)
    except BackendError as e:
        print("parla_evict: error: %s" % e, file=sys.stderr, flush=True)
        return None, EXIT_ERROR
    completed, status = False, EXIT_OK
    try:
        w.run()
        completed = True
    except MemoryError:
        print("parla_evict: out of host memory (MemoryError) in iteration %d"
              % len(w.iters), flush=True)
        status = EXIT_NOMEM
    except (BackendError, DeviceOutOfMemory) as e:
        print("parla_evict: error in iteration %d: %s" % (len(w.iters), e),
              file=sys.stderr, flush=True)
        status = EXIT_ERROR
    try:
        s = summarize(w, pred, completed, site)
        print_summary(s)
        if args.json_summary:
            write_json(args.json_summary, s)
    except MemoryError:
        status = EXIT_NOMEM
    if args.free_at_end:
        w.free()
    return w, status


if __name__ == "__main__":
    # Kept in a global so the workload's memory stays live until the
    # interpreter exits, where memprov takes its end-of-script measurement.
    WORKLOAD, STATUS = main(sys.argv[1:])
    sys.exit(STATUS)
