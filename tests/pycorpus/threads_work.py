# A clean program with worker threads and a queue: each worker builds and
# drops its results. It keeps nothing.
import json
import queue
import threading


def worker(q, out):
    while True:
        item = q.get()
        if item is None:
            break
        doc = json.dumps({"k%d" % i: [item] * 10 for i in range(200)})
        out.put(len(json.loads(doc)))


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
    print("threads_work:", total)


if __name__ == "__main__":
    main()
