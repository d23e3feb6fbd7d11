# The twin of asyncio_work.py with a leak: each job keeps its text in a
# module-global list (LEAK: the text is made at that line).
import asyncio

seen = []


async def job(i):
    await asyncio.sleep(0)
    text = ",".join(str(j) for j in range(i % 50 + 200)) * 4  # LEAK
    seen.append(text)
    return len(text)


async def main():
    total = 0
    for _ in range(6):
        total += sum(await asyncio.gather(*(job(i) for i in range(200))))
    print("leak_asyncio:", total)


if __name__ == "__main__":
    asyncio.run(main())
