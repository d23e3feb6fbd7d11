#!/usr/bin/python3
"""check-layers.py - the file-to-file call graph of memprov's objects, from
nm, checked against the project's layering rules.

  scripts/check-layers.py                  analyzer/: no cycle between files
  scripts/check-layers.py --interpose      also interpose/: no file calls a
                                           file of a higher layer
  scripts/check-layers.py --cycles DIR     DIR/*.o: no cycle between files
  scripts/check-layers.py --layers DIR     DIR/*.o: layer rule (DIR/*.c say
                                           their layer)
  scripts/check-layers.py --graph DIR      print DIR's edges and exit 0

A file A calls a file B when a symbol undefined in A.o is defined (global)
in B.o: an edge A -> B. The rules:

- cycles: no chain of edges leads from a file back to itself. Each cycle
  is printed as "a.c -> b.c -> a.c" with the symbols behind each edge.
- layers: every DIR/X.c for an X.o says its layer in its opening comment,
  on a line " * Layer: N name" (N a number, the bottom layer lowest), and
  no file calls a file of a higher layer number (calls within a layer are
  allowed).

Objects must be built first (make). Exits 0 when every rule holds, 1 when
one is broken (each breach printed), 2 on a usage error or when nm fails
or an object is missing.
"""
import glob
import os
import re
import subprocess
import sys

LAYER_RE = re.compile(r'^\s*\*\s*Layer:\s*(\d+)\b\s*(.*)$')


def fail_usage(msg):
    sys.stderr.write('check-layers: %s\n' % msg)
    sys.stderr.write(__doc__.split('\n\n')[1] + '\n')
    sys.exit(2)


def objects(d):
    objs = sorted(glob.glob(os.path.join(d, '*.o')))
    if not objs:
        sys.stderr.write('check-layers: no object files in %s/: build first (make)\n' % d)
        sys.exit(2)
    return objs


def symbols(obj):
    """(defined globals, undefined) of one object, from nm -P."""
    try:
        out = subprocess.run(['nm', '-P', obj], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.stderr.write('check-layers: nm %s: %s\n' % (obj, e))
        sys.exit(2)
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2:
            continue
        name, typ = f[0], f[1]
        if typ == 'U':
            undefined.add(name)
        elif typ in 'TDBRCVWG' and typ != 'w':
            defined.add(name)
    return defined, undefined


def graph(d):
    """{file.c: {file.c: [symbols]}} for the objects of d."""
    defs, undefs = {}, {}
    for obj in objects(d):
        src = os.path.basename(obj)[:-2] + '.c'
        defs[src], undefs[src] = symbols(obj)
    owner = {}
    for src, names in defs.items():
        for n in names:
            owner.setdefault(n, src)
    edges = {src: {} for src in defs}
    for src, names in undefs.items():
        for n in sorted(names):
            dst = owner.get(n)
            if dst and dst != src:
                edges[src].setdefault(dst, []).append(n)
    return edges


def sccs(edges):
    """Strongly connected components (Tarjan), each a sorted list."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        # iterative DFS: a deep graph must not hit Python's recursion limit
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == node:
                            break
                    out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def cycle_in(comp, edges):
    """One shortest cycle through the first file of a component."""
    members = set(comp)
    start = comp[0]
    prev, queue = {start: None}, [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(edges[v]):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path.reverse()
                return path + [start]
            if w in members and w not in prev:
                prev[w] = v
                queue.append(w)
    return comp + [comp[0]]


def edge_text(edges, a, b):
    names = edges[a][b]
    more = ', ...' if len(names) > 3 else ''
    return '%s -> %s (%s%s)' % (a, b, ', '.join(names[:3]), more)


def check_cycles(d, name):
    edges = graph(d)
    d = name
    bad = 0
    for comp in sccs(edges):
        if len(comp) < 2:
            continue
        bad += 1
        path = cycle_in(comp, edges)
        print('%s: cycle between files: %s' % (d, ' -> '.join(path)))
        for a, b in zip(path, path[1:]):
            print('    ' + edge_text(edges, a, b))
        if len(comp) > len(path) - 1:
            print('    (%d files in this knot: %s)' % (len(comp), ' '.join(comp)))
    return bad


def layer_of(path):
    """(N, name) from the ' * Layer: N name' line of the opening comment."""
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            text = f.read(8192)
    except OSError:
        return None
    m = re.match(r'\s*/\*(.*?)\*/', text, re.S)
    if not m:
        return None
    for line in m.group(1).splitlines():
        lm = LAYER_RE.match(line)
        if lm:
            return int(lm.group(1)), lm.group(2).strip()
    return None


def check_layers(d, name):
    edges = graph(d)
    layers, bad = {}, 0
    for src in sorted(edges):
        lay = layer_of(os.path.join(d, src))
        if lay is None:
            print('%s: %s has no " * Layer: N name" line in its opening comment' %
                  (name, src))
            bad += 1
        else:
            layers[src] = lay
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if a in layers and b in layers and layers[b][0] > layers[a][0]:
                print('%s: %s (layer %d %s) calls %s (layer %d %s), a higher layer' %
                      (name, a, layers[a][0], layers[a][1], b, layers[b][0], layers[b][1]))
                print('    ' + edge_text(edges, a, b))
                bad += 1
    return bad


def main(argv):
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cycles, layers, graphs = [], [], []
    named = False               # a directory given: analyzer/ is not implied
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == '--interpose':
            layers.append((os.path.join(top, 'interpose'), 'interpose'))
        elif a in ('--cycles', '--layers', '--graph'):
            if not args:
                fail_usage('%s wants a directory' % a)
            d = args.pop(0)
            {'--cycles': cycles, '--layers': layers, '--graph': graphs}[a].append((d, d))
            named = True
        elif a in ('-h', '--help'):
            sys.stdout.write(__doc__)
            return 0
        else:
            fail_usage('unknown argument %r' % a)
    if graphs:
        for d, _ in graphs:
            edges = graph(d)
            for a in sorted(edges):
                for b in sorted(edges[a]):
                    print(edge_text(edges, a, b))
        return 0
    if not named:
        cycles.append((os.path.join(top, 'analyzer'), 'analyzer'))
    bad = 0
    for d, name in cycles:
        bad += check_cycles(d, name)
    for d, name in layers:
        bad += check_layers(d, name)
    if bad:
        print('check-layers: %d breach%s of the layering rules' % (bad, '' if bad == 1 else 'es'))
        return 1
    print('check-layers: ok (%s)' % ', '.join(
        ['no cycle in %s' % name for _, name in cycles] +
        ['layers hold in %s' % name for _, name in layers]))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
