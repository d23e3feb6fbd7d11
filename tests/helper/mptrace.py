# mptrace.py - a second reader of memprov traces (format versions 1 and
# 2), written from include/memprov_trace.h alone, for the tests that check
# libmemprov.so's output without the analyzer (t2000, t2010, t2160, ...).
#
#   import mptrace
#   t = mptrace.Trace(path)      # t.hdr: dict of header fields
#   for c in t.chunks(): ...     # dicts: off, used, tid, serial, seq, size, first_ts
#   for r in t.records(): ...    # (ts, type, flags, func, kind, body, serial)
#   for r in t.raw(c): ...       # (offset, encoded length, ts, type, flags, func, kind, body)
#
# body is the record's bytes after its 16-byte head in the version 1
# layout (version 2's compact records are expanded to it), so callers
# unpack fields the same way for both versions. records() returns every
# record of every chunk, sorted by timestamp (stable: file order first).
# It asserts what a writer guarantees: whole records up to used, valid
# varints, chunk heads at block boundaries.
import struct

MAGIC = b"MEMPROV\x1a"
CHUNK_MAGIC = 0x4B43504D
ALLOC, FREE, STACK = 1, 2, 3
FN_MALLOC, FN_FREE, FN_MUNMAP = 1, 10, 15
KIND_HEAP = 1


def uvarint(d, p, end):
    x = shift = 0
    while True:
        assert p < end and shift <= 63, "varint past the used bytes"
        b = d[p]
        p += 1
        x |= (b & 0x7F) << shift
        if not b & 0x80:
            return x, p
        shift += 7


def svarint(d, p, end):
    u, p = uvarint(d, p, end)
    return (u >> 1) ^ -(u & 1), p


class Trace:
    def __init__(self, path):
        self.d = d = open(path, "rb").read()
        assert d[:8] == MAGIC, "bad magic"
        ver, hs, cs, flags, nxt, pid, ppid, state, exst = struct.unpack_from("<IIIIQiiIi", d, 8)
        self.hdr = dict(version=ver, header_size=hs, chunk_size=cs, flags=flags,
                        next_chunk=nxt, pid=pid, ppid=ppid, state=state, exit_status=exst,
                        stop_reason=struct.unpack_from("<I", d, 72)[0],
                        sample_bytes=struct.unpack_from("<I", d, 84)[0],
                        rss_interval_ns=struct.unpack_from("<Q", d, 88)[0])
        assert ver in (1, 2), "version %d" % ver

    def chunks(self):
        d, h = self.d, self.hdr
        cs, hs = h["chunk_size"], h["header_size"]
        i = 0
        while i < h["next_chunk"]:
            off = hs + i * cs
            if off + 32 > len(d):
                break
            magic, used, tid, ser, seq, size, fts = struct.unpack_from("<IIIIIIQ", d, off)
            if magic == 0:
                i += 1
                continue
            assert magic == CHUNK_MAGIC, "bad chunk magic at %d" % off
            if h["version"] == 1:
                size = cs
                i += 1
            else:
                assert size and size % cs == 0, "chunk size %d at %d" % (size, off)
                i += size // cs
            assert used <= size - 32, "used past the chunk at %d" % off
            yield dict(off=off, used=used, tid=tid, serial=ser, seq=seq, size=size,
                       first_ts=fts)

    def chunk_records(self, c):
        for r in self.raw(c):
            yield r[2:]

    def raw(self, c):
        d = self.d
        p, end = c["off"] + 32, c["off"] + 32 + c["used"]
        assert end <= len(d) or self.hdr["state"] == 0, "chunk cut"
        end = min(end, len(d))
        if self.hdr["version"] == 1:
            while p < end:
                typ, fl, sz, fn, kind, _, ts = struct.unpack_from("<BBHHBBQ", d, p)
                assert sz >= 16 and sz % 8 == 0 and p + sz <= end
                yield p, sz, ts, typ, fl, fn, kind, d[p + 16:p + sz]
                p += sz
            return
        ts, addr = c["first_ts"], 0
        while p < end:
            start = p
            tag = d[p]
            p += 1
            typ = tag & 0x3F
            assert typ and not tag & 0x80, "bad tag at %d" % (p - 1)
            fl, fn, kind = 0, {ALLOC: FN_MALLOC, FREE: FN_FREE}.get(typ, 0), 0
            if typ in (ALLOC, FREE):
                kind = KIND_HEAP
            if tag & 0x40:
                fl = d[p]
                fn, p = uvarint(d, p + 1, end)
                kind = d[p]
                p += 1
            dt, p = uvarint(d, p, end)
            ts += dt
            if typ == ALLOC:
                da, p = svarint(d, p, end)
                size, p = uvarint(d, p, end)
                stack, p = uvarint(d, p, end)
                addr = (addr + da) & (2**64 - 1)
                body = struct.pack("<QQQ", addr, size, stack)
            elif typ == FREE:
                da, p = svarint(d, p, end)
                addr = (addr + da) & (2**64 - 1)
                body = struct.pack("<Q", addr)
                if fn == FN_MUNMAP:
                    ln, p = uvarint(d, p, end)
                    body += struct.pack("<Q", ln)
            elif typ == STACK:
                sid, p = uvarint(d, p, end)
                n, p = uvarint(d, p, end)
                npy, p = uvarint(d, p, end)
                frames, prev = [], 0
                for _ in range(n):
                    dv, p = svarint(d, p, end)
                    prev = (prev + dv) & (2**64 - 1)
                    frames.append(prev)
                py = []
                for _ in range(npy):
                    code, p = uvarint(d, p, end)
                    line, p = uvarint(d, p, end)
                    py += [code, line]
                body = struct.pack("<QHHI", sid, n, npy, 0) + struct.pack(
                    "<%dQ" % n, *frames) + struct.pack("<%dI" % (2 * npy), *py)
            else:
                ln, p = uvarint(d, p, end)
                assert p + ln <= end, "framed record past the used bytes"
                body = d[p:p + ln] + b"\0" * ((-(16 + ln)) % 8)
                p += ln
            yield start, p - start, ts, typ, fl, fn, kind, body

    def records(self):
        out = []
        for c in self.chunks():
            for r in self.chunk_records(c):
                out.append(r + (c["serial"],))
        out.sort(key=lambda r: r[0])
        return out
