# A clean program that does ordinary work with the standard library: json
# and re on generated text, collections, hashing, csv, dates and the
# environment (os.environ). It keeps
# nothing: every report must name none of its lines.
import collections
import csv
import datetime
import hashlib
import io
import json
import os
import re


def make_records(n):
    return [{"id": i, "name": "user%d" % i, "tags": ["t%d" % (i % 7)] * (i % 5)}
            for i in range(n)]


def round_trip(records):
    text = json.dumps(records)
    return json.loads(text)


def word_counts(text):
    return collections.Counter(re.findall(r"[a-z]+\d*", text))


def to_csv(records):
    out = io.StringIO()
    w = csv.writer(out)
    for r in records:
        w.writerow([r["id"], r["name"], ";".join(r["tags"])])
    return out.getvalue()


def main():
    total = 0
    for step in range(8):
        records = round_trip(make_records(1000))
        counts = word_counts(json.dumps(records))
        digest = hashlib.sha256(to_csv(records).encode()).hexdigest()
        day = datetime.date(2024, 1, 1) + datetime.timedelta(days=step)
        os.environ["STDLIB_WORK_STEP"] = str(step)
        total += len(counts) + len(digest) + day.day
    print("stdlib_work:", total)


if __name__ == "__main__":
    main()
