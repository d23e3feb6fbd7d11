#!/usr/bin/python3
"""json_get.py - read figures out of a memprov --json report in tests.

  json_get.py FILE PATH...            print each value, one per line
  json_get.py --check FILE PATH=V...  exit 1, naming each mismatch, unless
                                      every PATH has the value V

PATH is dotted (totals.heap.bytes, sites.0.frames.0.function), or a Python
expression over the parsed report `j` when it starts with '=' (for
example '=len(j["sites"])'). Values print as JSON does (true, null), bare
strings unquoted. FILE '-' reads stdin.
"""
import json
import os
import sys


def get(j, path):
    if path.startswith('='):
        return eval(path[1:], {'j': j, 'os': os, 'len': len, 'sum': sum})
    v = j
    for part in path.split('.'):
        if isinstance(v, list):
            v = v[int(part)]
        elif isinstance(v, dict):
            if part not in v:
                raise KeyError('no key %r in %s' % (part, path))
            v = v[part]
        else:
            raise KeyError('%s: %r is not an object' % (path, part))
    return v


def show(v):
    return v if isinstance(v, str) else json.dumps(v)


def main(argv):
    check = argv[:1] == ['--check']
    if check:
        argv = argv[1:]
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    f = sys.stdin if argv[0] == '-' else open(argv[0])
    j = json.load(f)
    bad = 0
    for arg in argv[1:]:
        if check:
            path, _, want = arg.rpartition('=') if not arg.startswith('=') \
                else arg.rpartition('==')
            try:
                got = show(get(j, path))
            except Exception as e:
                got = 'error: %s' % e
            if got != want:
                print('%s: expected %s, got %s' % (path, want, got))
                bad = 1
        else:
            print(show(get(j, arg)))
    return bad


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
