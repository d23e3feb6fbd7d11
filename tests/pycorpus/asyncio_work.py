# A clean asyncio program: many small tasks gathered, each building and
# dropping a string. It keeps nothing.
import asyncio


async def job(i):
    await asyncio.sleep(0)
    text = ",".join(str(j) for j in range(i % 50 + 200))
    return len(text)


async def main():
    total = 0
    for _ in range(6):
        total += sum(await asyncio.gather(*(job(i) for i in range(200))))
    print("asyncio_work:", total)


if __name__ == "__main__":
    asyncio.run(main())
