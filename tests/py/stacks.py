# Allocations whose Python stacks must stay right through generators,
# exception unwinding, closed generators and coroutines. Each kept buffer
# has its own size; t4030 checks the frames of this file above each one.
import asyncio

keep = []


def gen():
    for i in range(3):
        yield i
    keep.append(bytearray(1_100_000))  # GEN-ALLOC
    yield -1


def consume():
    for _ in gen():  # CONSUME-LINE
        pass


def deep(n):
    if n == 0:
        raise ValueError("deep")
    deep(n - 1)


def catcher():
    try:
        deep(40)
    except ValueError:
        keep.append(bytearray(1_200_000))  # CATCH-ALLOC


def after():
    keep.append(bytearray(1_300_000))  # AFTER-ALLOC


def abandoned():
    yield 1
    yield 2


async def inner():
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    keep.append(bytearray(1_400_000))  # CORO-ALLOC


async def outer():
    await inner()  # OUTER-LINE


consume()  # MAIN-CONSUME
catcher()  # MAIN-CATCH
g = abandoned()
next(g)
g.close()
try:
    deep(200)
except ValueError:
    pass
after()  # MAIN-AFTER
asyncio.run(outer())  # MAIN-ASYNC
print(len(keep))
