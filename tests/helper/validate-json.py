#!/usr/bin/python3
"""validate-json.py - check memprov --json outputs against the project's
JSON Schemas (schemas/REPORT.schema.json, draft 2020-12).

  tests/helper/validate-json.py FILE...

Each FILE holds one JSON object whose "schema" member ("memprov.REPORT/1")
names its schema. Prints one line per error and exits 1 when any file
does not validate, 2 when a schema itself is not valid.
"""
import json
import os
import sys

import jsonschema

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_schema(report, cache={}):
    if report not in cache:
        path = os.path.join(TOP, "schemas", report + ".schema.json")
        with open(path) as f:
            s = json.load(f)
        try:
            jsonschema.Draft202012Validator.check_schema(s)
        except jsonschema.SchemaError as e:
            sys.stderr.write("%s: not a valid schema: %s\n" % (path, e.message))
            sys.exit(2)
        cache[report] = jsonschema.Draft202012Validator(s)
    return cache[report]


def main(files):
    bad = 0
    for path in files:
        with open(path) as f:
            doc = json.load(f)
        name = doc.get("schema") if isinstance(doc, dict) else None
        if not isinstance(name, str) or not name.startswith("memprov.") or not name.endswith("/1"):
            print("%s: no \"schema\": \"memprov.REPORT/1\" member (%r)" % (path, name))
            bad += 1
            continue
        report = name[len("memprov."):-2]
        errors = sorted(load_schema(report).iter_errors(doc), key=lambda e: list(e.path))
        for e in errors[:10]:
            print("%s: %s at /%s" % (path, e.message[:200], "/".join(str(p) for p in e.path)))
        bad += bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1:]))
