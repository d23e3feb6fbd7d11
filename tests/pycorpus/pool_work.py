# A clean multiprocessing program: a pool maps a function over a range,
# and the parent sums the results. It keeps nothing.
import multiprocessing


def square_len(i):
    return len(str(i * i) * 100)


def main():
    with multiprocessing.Pool(2) as pool:
        total = sum(pool.map(square_len, range(600)))
    print("pool_work:", total)


if __name__ == "__main__":
    main()
