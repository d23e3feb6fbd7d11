"""
backends.py - where a PArray's device copies live, and how bytes move.

Three backends give the runtime the same five operations (allocate and free
a device buffer, copy host->device and device->host, run a small kernel):

  host    numpy only: a "device" buffer is a numpy block that the eviction
          manager accounts against the GPU budget. Needs nothing.
  cudart  ctypes calls of the CUDA runtime C API (cudaMalloc, cudaFree,
          cudaMemcpy, cudaHostAlloc, cudaFreeHost) through a libcudart
          chosen by --cudart PATH, $MEMPROV_CUDART, or the toolkit's own
          /usr/local/cuda/lib64/libcudart.so. Every return code is checked.
          A kernel is emulated on the host: device -> pinned staging,
          numpy on the staging block, staging -> device.
  cupy    a real GPU through CuPy (its own memory pools).

Like CuPy, host and cudart keep a caching device pool (freed blocks are
kept per rounded size and reused) and a pinned staging pool for transfers;
each can be switched off, and then every free goes back to the allocator.
"""
import ctypes
import os

import numpy as np

DEFAULT_CUDART = "/usr/local/cuda/lib64/libcudart.so"

# enum cudaMemcpyKind
CUDA_MEMCPY_HOST_TO_DEVICE = 1
CUDA_MEMCPY_DEVICE_TO_HOST = 2
# enum cudaError
CUDA_SUCCESS = 0
CUDA_ERROR_MEMORY_ALLOCATION = 2
CUDA_HOST_ALLOC_DEFAULT = 0


class BackendError(RuntimeError):
    """A backend call failed (CUDA error code, missing library or symbol)."""


class AllocatorOutOfMemory(BackendError):
    """The raw allocator had no memory left for a block."""


class Block:
    """One allocation of a pool: handle is a device pointer or an array."""
    __slots__ = ("handle", "size")

    def __init__(self, handle, size):
        self.handle = handle
        self.size = size


class CachingPool:
    """
    A pool like CuPy's: sizes are rounded up to 512 bytes and a freed block
    is kept for the next request of the same rounded size. When the raw
    allocator runs out, the cached blocks are given back and the request
    retried once. enabled=False frees every block at once instead.
    """

    ROUND = 512

    def __init__(self, raw_alloc, raw_free, enabled=True):
        self._raw_alloc = raw_alloc
        self._raw_free = raw_free
        self.enabled = enabled
        self._cached = {}        # rounded size -> [Block]
        self.reserved = 0        # bytes held from the raw allocator
        self.in_use = 0          # bytes handed out and not freed
        self.raw_allocs = 0

    def malloc(self, nbytes):
        size = (max(nbytes, 1) + self.ROUND - 1) // self.ROUND * self.ROUND
        cached = self._cached.get(size)
        if cached:
            blk = cached.pop()
        else:
            try:
                blk = Block(self._raw_alloc(size), size)
            except AllocatorOutOfMemory:
                self.free_all_blocks()
                blk = Block(self._raw_alloc(size), size)
            self.reserved += size
            self.raw_allocs += 1
        self.in_use += size
        return blk

    def free(self, blk):
        self.in_use -= blk.size
        if self.enabled:
            self._cached.setdefault(blk.size, []).append(blk)
            return
        self._raw_free(blk.handle)
        self.reserved -= blk.size

    def free_all_blocks(self):
        """Give every cached (free) block back to the raw allocator."""
        for blocks in self._cached.values():
            for blk in blocks:
                self._raw_free(blk.handle)
                self.reserved -= blk.size
        self._cached.clear()


class DeviceBuffer:
    """A PArray's copy on one GPU: a pool block seen as shape x dtype."""
    __slots__ = ("device", "block", "nbytes", "shape", "dtype", "obj")

    def __init__(self, device, block, nbytes, shape, dtype, obj=None):
        self.device = device
        self.block = block
        self.nbytes = nbytes
        self.shape = shape
        self.dtype = dtype
        self.obj = obj


def _flat_bytes(array):
    """The bytes of a C-contiguous array as a 1-D uint8 view (no copy)."""
    return array.reshape(-1).view(np.uint8)


class HostBackend:
    """GPU buffers are numpy blocks; transfers are numpy copies."""

    name = "host"

    def __init__(self, device_pool=True, pinned_pool=True):
        self.pinned_pool_enabled = pinned_pool   # no staging: direct copies
        self._pools = {}
        self._device_pool_enabled = device_pool

    def _pool(self, device):
        pool = self._pools.get(device)
        if pool is None:
            pool = CachingPool(self._raw_alloc, self._raw_free,
                               self._device_pool_enabled)
            self._pools[device] = pool
        return pool

    @staticmethod
    def _raw_alloc(size):
        return np.empty(size, dtype=np.uint8)    # the "device" memory

    @staticmethod
    def _raw_free(handle):
        pass                                     # dropped with the block

    def alloc(self, device, shape, dtype, nbytes):
        blk = self._pool(device).malloc(nbytes)
        return DeviceBuffer(device, blk, nbytes, shape, dtype)

    def free(self, buf):
        self._pool(buf.device).free(buf.block)
        buf.block = None

    def _view(self, buf):
        return buf.block.handle[:buf.nbytes].view(buf.dtype).reshape(buf.shape)

    def to_device(self, buf, host):
        np.copyto(self._view(buf), host)

    def to_host(self, host, buf):
        np.copyto(host, self._view(buf))

    def kernel(self, buf, write):
        view = self._view(buf)
        if write:
            view += 1
        return float(view[:1].sum())

    def stats(self):
        return {"device_reserved": sum(p.reserved for p in self._pools.values()),
                "pinned_reserved": 0}

    def close(self):
        for pool in self._pools.values():
            pool.free_all_blocks()


class _Cudart:
    """The CUDA runtime C API through ctypes; every call's status checked."""

    SIGNATURES = {
        "cudaMalloc": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t],
        "cudaFree": [ctypes.c_void_p],
        "cudaMemcpy": [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                       ctypes.c_int],
        "cudaHostAlloc": [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                          ctypes.c_uint],
        "cudaFreeHost": [ctypes.c_void_p],
        "cudaSetDevice": [ctypes.c_int],
    }

    def __init__(self, path):
        try:
            self.lib = ctypes.CDLL(path)
        except OSError as e:
            raise BackendError("cannot load the CUDA runtime '%s': %s "
                               "(give another with --cudart PATH or "
                               "MEMPROV_CUDART)" % (path, e)) from None
        self.path = path
        for name, argtypes in self.SIGNATURES.items():
            fn = getattr(self.lib, name, None)
            if fn is None:
                if name == "cudaSetDevice":
                    continue
                raise BackendError("'%s' has no %s" % (path, name))
            fn.argtypes = argtypes
            fn.restype = ctypes.c_int
            setattr(self, name, fn)
        err = getattr(self.lib, "cudaGetErrorString", None)
        if err is not None:
            err.argtypes = [ctypes.c_int]
            err.restype = ctypes.c_char_p
        self._error_string = err

    def check(self, rc, what):
        if rc == CUDA_SUCCESS:
            return
        text = ""
        if self._error_string is not None:
            s = self._error_string(rc)
            text = " (%s)" % s.decode(errors="replace") if s else ""
        cls = (AllocatorOutOfMemory if rc == CUDA_ERROR_MEMORY_ALLOCATION
               else BackendError)
        raise cls("%s failed: CUDA error %d%s" % (what, rc, text))


class CudartBackend(HostBackend):
    """Device memory from cudaMalloc, staging in cudaHostAlloc'd memory."""

    name = "cudart"

    def __init__(self, device_pool=True, pinned_pool=True, cudart=None):
        super().__init__(device_pool, pinned_pool)
        path = cudart or os.environ.get("MEMPROV_CUDART") or DEFAULT_CUDART
        self.rt = _Cudart(path)
        self.pinned = CachingPool(self._pinned_alloc, self._pinned_free,
                                  pinned_pool)
        self._current = None

    def _raw_alloc(self, size):
        ptr = ctypes.c_void_p()
        self.rt.check(self.rt.cudaMalloc(ctypes.byref(ptr), size),
                      "cudaMalloc(%d)" % size)
        return ptr.value

    def _raw_free(self, handle):
        self.rt.check(self.rt.cudaFree(handle), "cudaFree(%#x)" % handle)

    def _pinned_alloc(self, size):
        ptr = ctypes.c_void_p()
        self.rt.check(self.rt.cudaHostAlloc(ctypes.byref(ptr), size,
                                            CUDA_HOST_ALLOC_DEFAULT),
                      "cudaHostAlloc(%d)" % size)
        return ptr.value

    def _pinned_free(self, handle):
        self.rt.check(self.rt.cudaFreeHost(handle),
                      "cudaFreeHost(%#x)" % handle)

    def _set_device(self, device):
        # Only a multi-GPU run switches devices; device 0 is the default.
        if device == self._current or (self._current is None and device == 0):
            return
        if not hasattr(self.rt, "cudaSetDevice"):
            raise BackendError("'%s' has no cudaSetDevice" % self.rt.path)
        self.rt.check(self.rt.cudaSetDevice(device),
                      "cudaSetDevice(%d)" % device)
        self._current = device

    def alloc(self, device, shape, dtype, nbytes):
        self._set_device(device)
        return super().alloc(device, shape, dtype, nbytes)

    def free(self, buf):
        self._set_device(buf.device)
        super().free(buf)

    @staticmethod
    def _staging_view(blk, nbytes):
        raw = (ctypes.c_ubyte * nbytes).from_address(blk.handle)
        return np.frombuffer(raw, dtype=np.uint8, count=nbytes)

    def _memcpy(self, dst, src, nbytes, kind):
        self.rt.check(self.rt.cudaMemcpy(dst, src, nbytes, kind),
                      "cudaMemcpy(%d bytes, kind %d)" % (nbytes, kind))

    def to_device(self, buf, host):
        self._set_device(buf.device)
        blk = self.pinned.malloc(buf.nbytes)
        try:
            np.copyto(self._staging_view(blk, buf.nbytes), _flat_bytes(host))
            self._memcpy(buf.block.handle, blk.handle, buf.nbytes,
                         CUDA_MEMCPY_HOST_TO_DEVICE)
        finally:
            self.pinned.free(blk)

    def to_host(self, host, buf):
        self._set_device(buf.device)
        blk = self.pinned.malloc(buf.nbytes)
        try:
            self._memcpy(blk.handle, buf.block.handle, buf.nbytes,
                         CUDA_MEMCPY_DEVICE_TO_HOST)
            np.copyto(_flat_bytes(host), self._staging_view(blk, buf.nbytes))
        finally:
            self.pinned.free(blk)

    def kernel(self, buf, write):
        # No kernels through the runtime API alone: run it on the staging
        # block, the way a host-side fallback would.
        self._set_device(buf.device)
        blk = self.pinned.malloc(buf.nbytes)
        try:
            self._memcpy(blk.handle, buf.block.handle, buf.nbytes,
                         CUDA_MEMCPY_DEVICE_TO_HOST)
            view = self._staging_view(blk, buf.nbytes).view(buf.dtype)
            if write:
                view += 1
                self._memcpy(buf.block.handle, blk.handle, buf.nbytes,
                             CUDA_MEMCPY_HOST_TO_DEVICE)
            return float(view[:1].sum())
        finally:
            self.pinned.free(blk)

    def stats(self):
        st = super().stats()
        st["pinned_reserved"] = self.pinned.reserved
        return st

    def close(self):
        super().close()
        self.pinned.free_all_blocks()


class CupyBackend:
    """A real GPU through CuPy and CuPy's own device and pinned pools."""

    name = "cupy"

    def __init__(self, device_pool=True, pinned_pool=True):
        try:
            import cupy
        except ImportError as e:
            raise BackendError("the cupy backend needs CuPy: %s" % e) from None
        self.cp = cupy
        if not device_pool:
            cupy.cuda.set_allocator(None)
        if not pinned_pool:
            cupy.cuda.set_pinned_memory_allocator(None)

    def alloc(self, device, shape, dtype, nbytes):
        with self.cp.cuda.Device(device):
            arr = self.cp.empty(shape, dtype=dtype)
        return DeviceBuffer(device, None, nbytes, shape, dtype, arr)

    def free(self, buf):
        buf.obj = None           # back to CuPy's pool (or cudaFree)

    def _staging(self, nbytes):
        mem = self.cp.cuda.alloc_pinned_memory(nbytes)
        return mem, np.frombuffer(mem, dtype=np.uint8, count=nbytes)

    def to_device(self, buf, host):
        mem, stage = self._staging(buf.nbytes)
        np.copyto(stage, _flat_bytes(host))
        with self.cp.cuda.Device(buf.device):
            buf.obj.data.copy_from_host(ctypes.c_void_p(mem.ptr),
                                            buf.nbytes)
        del stage, mem

    def to_host(self, host, buf):
        mem, stage = self._staging(buf.nbytes)
        with self.cp.cuda.Device(buf.device):
            buf.obj.data.copy_to_host(ctypes.c_void_p(mem.ptr),
                                          buf.nbytes)
        np.copyto(_flat_bytes(host), stage)
        del stage, mem

    def kernel(self, buf, write):
        with self.cp.cuda.Device(buf.device):
            if write:
                buf.obj += 1
            return float(buf.obj.ravel()[:1].sum())

    def stats(self):
        return {"device_reserved":
                self.cp.get_default_memory_pool().total_bytes(),
                "pinned_reserved":
                self.cp.get_default_pinned_memory_pool().total_bytes()
                if hasattr(self.cp.get_default_pinned_memory_pool(),
                           "total_bytes") else 0}

    def close(self):
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()


def make_backend(name, device_pool=True, pinned_pool=True, cudart=None):
    """The backend called name ('host', 'cudart' or 'cupy')."""
    if name == "host":
        return HostBackend(device_pool, pinned_pool)
    if name == "cudart":
        return CudartBackend(device_pool, pinned_pool, cudart)
    if name == "cupy":
        return CupyBackend(device_pool, pinned_pool)
    raise BackendError("unknown backend '%s' (host, cudart or cupy)" % name)
