"""
parla - a small PArray runtime that reproduces Parla's eviction leak.

Not the real Parla: just enough of its PArray (per-device buffers, MSI
coherence, an owner), its LRU eviction manager and its task acquire/release
protocol to reproduce, byte for byte, the host-memory growth that evicting
Modified GPU copies causes when the write-back allocates a new host array.
scripts/parla_evict.py is the entry point.
"""
from .parray import CPU, MODIFIED, SHARED, INVALID, PArray, write_back_site
from .eviction import EvictionManager, DeviceOutOfMemory
from .backends import make_backend, BackendError
from .tasks import Runtime, Task, run_task_graph
from .marks import memprov_mark

__all__ = [
    "CPU", "MODIFIED", "SHARED", "INVALID", "PArray", "write_back_site",
    "EvictionManager", "DeviceOutOfMemory", "make_backend", "BackendError",
    "Runtime", "Task", "run_task_graph", "memprov_mark",
]
