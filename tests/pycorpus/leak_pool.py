# The twin of pool_work.py with a leak: the parent keeps every result's
# text in a module-global list (LEAK: made at that line).
import multiprocessing

results = []


def square_len(i):
    return len(str(i * i) * 100)


def collect(n):
    results.append(bytearray(n * 10))  # LEAK


def main():
    with multiprocessing.Pool(2) as pool:
        for n in pool.imap(square_len, range(600)):
            collect(n)
    print("leak_pool:", len(results))


if __name__ == "__main__":
    main()
