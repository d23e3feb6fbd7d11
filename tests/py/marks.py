# step() is called 7 times, the generator ticks() 3 times (4 yields each),
# the coroutine job() twice: one mark per call for each when named.
import asyncio


def step(i):
    return i * 2


def ticks():
    for i in range(4):
        yield i


async def job():
    await asyncio.sleep(0)


for i in range(7):
    step(i)
for _ in range(3):
    for t in ticks():
        step  # not a call
for _ in range(2):
    asyncio.run(job())
