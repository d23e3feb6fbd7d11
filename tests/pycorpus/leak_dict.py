# The twin of stdlib_work.py with a leak: every record's name is also
# registered in a module-global dict that nothing ever removes from, a
# growing dict of small strings (LEAK: the dict's table grows at that line).
import json
import re

registry = {}


def register(records):
    for r in records:
        registry["%s-%d" % (r["name"], len(registry))] = r["name"] * 3  # LEAK


def make_records(n):
    return [{"id": i, "name": "user%d" % i} for i in range(n)]


def main():
    total = 0
    for step in range(12):
        records = json.loads(json.dumps(make_records(2000)))
        register(records)
        total += len(re.findall(r"user\d+", json.dumps(records)))
    print("leak_dict:", total, len(registry))


if __name__ == "__main__":
    main()
