"""
eviction.py - the LRU eviction manager: a byte budget per GPU.

Every device copy of a PArray is registered here while it exists. Tasks
reference copies while they run (acquire/release); a copy's last release
makes it the most recently used. When a new copy would push a GPU past
its budget ("reserved memory runs low"), the least recently used copies
that no task references are evicted, oldest first, until it fits.
"""
from collections import OrderedDict


class DeviceOutOfMemory(RuntimeError):
    """Every resident copy on the device is referenced by a running task."""


class EvictionManager:
    def __init__(self, budgets):
        self.budget = dict(budgets)           # device -> bytes
        self.used = {d: 0 for d in budgets}   # bytes of resident copies
        self._lru = {d: OrderedDict() for d in budgets}  # key -> PArray
        self._refs = {}                       # (device, key) -> tasks
        self.evictions = 0                    # copies evicted, all devices
        self.dirty_evictions = 0              # of which written back

    def reserve(self, device, nbytes):
        """Make room for nbytes more on device, evicting unreferenced copies."""
        budget = self.budget[device]
        if nbytes > budget:
            raise DeviceOutOfMemory("a %d-byte copy exceeds device %d's "
                                    "budget of %d bytes" %
                                    (nbytes, device, budget))
        lru = self._lru[device]
        while self.used[device] + nbytes > budget:
            victim = None
            for key, parray in lru.items():
                if not self._refs.get((device, key)):
                    victim = parray
                    break
            if victim is None:
                raise DeviceOutOfMemory(
                    "device %d: %d bytes in use by running tasks, budget %d"
                    % (device, self.used[device], budget))
            self.evictions += 1
            if victim.evict(device):
                self.dirty_evictions += 1

    def track(self, device, parray, nbytes):
        """A copy of parray now exists on device (most recently used)."""
        self._lru[device][parray.key] = parray
        self.used[device] += nbytes

    def untrack(self, device, parray, nbytes):
        """parray's copy on device is gone (evicted or invalidated)."""
        del self._lru[device][parray.key]
        self._refs.pop((device, parray.key), None)
        self.used[device] -= nbytes

    def acquire(self, device, parray):
        k = (device, parray.key)
        self._refs[k] = self._refs.get(k, 0) + 1
        self._lru[device].move_to_end(parray.key)

    def release(self, device, parray):
        k = (device, parray.key)
        self._refs[k] -= 1
        if parray.key in self._lru[device]:
            self._lru[device].move_to_end(parray.key)

    def resident(self, device):
        return len(self._lru[device])
