"""
parray.py - PArray: one logical array with a buffer per device.

Devices are CPU (-1) and GPUs 0, 1, ... Each device's copy has an MSI
state: MODIFIED (the only valid copy, newer than the others), SHARED
(valid, others may hold the same data) or INVALID. The owner is the device
that last wrote. A PArray wraps the user's numpy array without copying it:
the CPU buffer IS the user's object, so the user's list keeps seeing it.

The leak (bug mode, as upstream): evicting a MODIFIED GPU copy writes it
back with cupy.asnumpy, which allocates a NEW host array. The CPU buffer
held until then (invalidated by the GPU write, but still the user's array)
stays alive through the user's list, so each dirty eviction adds one
array's bytes of host memory. Fixed mode copies into the host buffer the
PArray already holds.
"""
import inspect

import numpy as np

CPU = -1
MODIFIED, SHARED, INVALID = "M", "S", "I"


class PArray:
    _next_key = 0

    def __init__(self, array, runtime, name=None):
        if not array.flags.c_contiguous:
            raise ValueError("a PArray wraps C-contiguous arrays only")
        self.key = PArray._next_key
        PArray._next_key += 1
        self.name = name or "parray%d" % self.key
        self.runtime = runtime
        self.shape = array.shape
        self.dtype = array.dtype
        self.nbytes = array.nbytes
        self._buffers = {CPU: array}          # wrapped, not copied
        self._state = {CPU: MODIFIED}
        self.owner = CPU

    # -- what a task sees -------------------------------------------------

    def state(self, device):
        return self._state.get(device, INVALID)

    def buffer(self, device):
        """The device's buffer (numpy array for CPU), valid or not."""
        return self._buffers.get(device)

    @property
    def host_array(self):
        return self._buffers.get(CPU)

    def acquire(self, device, write):
        """Make a valid copy on device for a task; a write invalidates the rest."""
        if self.state(device) == INVALID:
            self._fetch(device)
        if device != CPU:
            self.runtime.manager.acquire(device, self)
        if write:
            for other in list(self._state):
                if other != device and self._state[other] != INVALID:
                    self._invalidate(other)
            self._state[device] = MODIFIED
            self.owner = device

    def release(self, device):
        if device != CPU:
            self.runtime.manager.release(device, self)

    def evict(self, device):
        """
        Drop the copy on GPU device. A copy that holds the only valid data
        (MODIFIED, or the last SHARED one) is written back to the host
        first; returns True when it was (a dirty eviction).
        """
        if device == CPU:
            raise ValueError("the CPU copy is not evicted")
        dirty = False
        if self._state.get(device) == MODIFIED or not self._other_valid(device):
            self._write_back_to_host(device)
            dirty = True
        self._drop_device_copy(device)
        return dirty

    def drop_device_copies(self):
        """Free every GPU copy without writing back (the run is over)."""
        for device in [d for d in self._buffers if d != CPU]:
            self._drop_device_copy(device)

    # -- coherence ---------------------------------------------------------

    def _other_valid(self, device):
        return any(s != INVALID for d, s in self._state.items() if d != device)

    def _source(self):
        """The device to copy from: the owner if it is valid, else any valid."""
        if self._state.get(self.owner, INVALID) != INVALID:
            return self.owner
        for d, s in self._state.items():
            if s != INVALID:
                return d
        raise RuntimeError("%s has no valid copy" % self.name)

    def _fetch(self, device):
        src = self._source()
        if device == CPU:
            self._copy_to_host(src)
        else:
            self._ensure_device_buffer(device)
            self._copy_to_device(device, src)
        if self._state[src] == MODIFIED:
            self._state[src] = SHARED
        self._state[device] = SHARED

    def _invalidate(self, device):
        self._state[device] = INVALID
        if device != CPU:
            self._drop_device_copy(device)
        # The CPU buffer stays held, invalid: the user's list refers to it.

    def _ensure_device_buffer(self, device):
        if self._buffers.get(device) is not None:
            return
        rt = self.runtime
        rt.manager.reserve(device, self.nbytes)
        self._buffers[device] = rt.backend.alloc(device, self.shape,
                                                 self.dtype, self.nbytes)
        rt.manager.track(device, self, self.nbytes)

    def _drop_device_copy(self, device):
        buf = self._buffers.pop(device)
        self._state.pop(device, None)
        self.runtime.backend.free(buf)
        self.runtime.manager.untrack(device, self, self.nbytes)

    def _copy_to_device(self, device, src):
        dst = self._buffers[device]
        if src == CPU:
            self.runtime.backend.to_device(dst, self._buffers[CPU])
            return
        # GPU to GPU through the host, into the held host buffer.
        self._copy_to_host(src)
        self.runtime.backend.to_device(dst, self._buffers[CPU])

    def _copy_to_host(self, src):
        """A valid host copy from GPU src, into the host buffer held."""
        host = self._buffers.get(CPU)
        if host is None:
            host = np.empty(self.shape, dtype=self.dtype)
            self._buffers[CPU] = host
        self.runtime.backend.to_host(host, self._buffers[src])

    def _write_back_to_host(self, device):
        """
        Write the GPU copy on device back to the host before it is dropped.
        Bug mode allocates a new host array for it, as cupy.asnumpy does;
        the host buffer held until now is only replaced, never reused, and
        the user's list still refers to it. Fixed mode reuses it.
        """
        rt = self.runtime
        if rt.fresh_write_back:
            host = np.empty(self.shape, dtype=self.dtype)  # memprov: write-back allocation
        else:
            host = self._buffers.get(CPU)
            if host is None:
                host = np.empty(self.shape, dtype=self.dtype)
        rt.backend.to_host(host, self._buffers[device])
        self._buffers[CPU] = host
        self._state[CPU] = MODIFIED
        self.owner = CPU
        rt.write_backs += 1


WRITE_BACK_TAG = "# memprov: write-back allocation"


def write_back_site():
    """(file, line, function) of the bug-mode write-back allocation."""
    lines, first = inspect.getsourcelines(PArray._write_back_to_host)
    for i, text in enumerate(lines):
        if WRITE_BACK_TAG in text:
            return (inspect.getsourcefile(PArray._write_back_to_host),
                    first + i, "_write_back_to_host")
    raise RuntimeError("write-back tag not found")
