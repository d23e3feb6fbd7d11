#!/usr/bin/python3
"""trace_walk.py - list the records of a memprov trace for the fault tests.

  trace_walk.py TRACE              one line per record: OFFSET TYPE SIZE
                                   (file offset of the record head)
  trace_walk.py TRACE --header     the header fields the tests read

Reads include/memprov_trace.h's layout independently of the analyzer, so
that tests can damage a trace at a known record.
"""
import struct
import sys

HDR = 4096
CHUNK_HEAD = 32


def main(argv):
    data = open(argv[0], 'rb').read()
    magic, version, header_size, chunk_size, flags, next_chunk = \
        struct.unpack_from('<8sIIIIQ', data, 0)
    pid, ppid, state, exit_status = struct.unpack_from('<iiIi', data, 32)
    stop_reason, stack_depth = struct.unpack_from('<II', data, 72)
    if argv[1:] == ['--header']:
        print('version=%d chunk_size=%d flags=%d next_chunk=%d pid=%d '
              'state=%d exit_status=%d stop_reason=%d stack_depth=%d' %
              (version, chunk_size, flags, next_chunk, pid, state,
               exit_status, stop_reason, stack_depth))
        return 0
    for i in range(next_chunk):
        base = header_size + i * chunk_size
        if base + CHUNK_HEAD > len(data):
            break
        cmagic, used = struct.unpack_from('<II', data, base)
        if cmagic != 0x4b43504d:
            continue
        off = base + CHUNK_HEAD
        end = off + used
        while off + 16 <= end:
            rtype, rflags, rsize = struct.unpack_from('<BBH', data, off)
            print(off, rtype, rsize)
            if rsize < 16 or rsize % 8:
                break
            off += rsize
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
