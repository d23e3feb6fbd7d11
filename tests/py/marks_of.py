# marks_of.py TIMELINE.json: the trace's mark labels, one a line, with
# their length in UTF-8 bytes: "BYTES LABEL".
import json
import sys

with open(sys.argv[1]) as f:
    for m in json.load(f)["marks"]:
        print(len(m["label"].encode()), m["label"])
