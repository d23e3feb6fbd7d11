#!/usr/bin/python3
"""trace_walk.py - list the records of a memprov trace for the fault tests.

  trace_walk.py TRACE              one line per record: OFFSET TYPE SIZE
                                   (file offset of the record's first byte,
                                   its type, its length in the file), chunk
                                   by chunk in file order
  trace_walk.py TRACE --header     the header fields the tests read

Reads the trace with tests/helper/mptrace.py (format versions 1 and 2,
independently of the analyzer), so that tests can damage a trace at a
known record.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'helper'))
import mptrace  # noqa: E402


def main(argv):
    t = mptrace.Trace(argv[0])
    h = t.hdr
    if argv[1:] == ['--header']:
        import struct
        depth, = struct.unpack_from('<I', t.d, 76)
        print('version=%d chunk_size=%d flags=%d next_chunk=%d pid=%d '
              'state=%d exit_status=%d stop_reason=%d stack_depth=%d' %
              (h['version'], h['chunk_size'], h['flags'], h['next_chunk'], h['pid'],
               h['state'], h['exit_status'], h['stop_reason'], depth))
        return 0
    for c in t.chunks():
        for r in t.raw(c):
            print(r[0], r[3], r[1])
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
