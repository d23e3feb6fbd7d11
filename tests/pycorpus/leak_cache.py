# The twin of threads_work.py with a leak: the workers memoize their
# documents in a cache that is never evicted (LEAK: each entry's bytes
# are made at that line).
import json
import queue
import threading

_cache = {}


def render(item):
    if item not in _cache:
        _cache[item] = json.dumps({"k%d" % i: [item] * 10 for i in range(200)}).encode()  # LEAK
    return _cache[item]


def worker(q, out):
    while True:
        item = q.get()
        if item is None:
            break
        out.put(len(render(item)))


def main():
    q, out = queue.Queue(), queue.Queue()
    threads = [threading.Thread(target=worker, args=(q, out)) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(100):
        q.put(i)
    for _ in threads:
        q.put(None)
    for t in threads:
        t.join()
    total = 0
    while not out.empty():
        total += out.get()
    print("leak_cache:", total)


if __name__ == "__main__":
    main()
