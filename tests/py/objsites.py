# objsites.py FILE.json SCRIPT LINE: the live sites whose innermost frame
# of SCRIPT is at LINE, one line each: "KIND FUNC BLOCKS BYTES", sorted.
import json
import os
import sys

with open(sys.argv[1]) as f:
    report = json.load(f)
script, line = sys.argv[2], int(sys.argv[3])
out = []
for s in report["sites"]:
    frames = [p for p in s.get("python") or []
              if os.path.basename(p["file"] or "") == script]
    if frames and frames[0]["line"] == line:
        out.append("%s %s %d %d" % (s["kind"], s["func"], s["blocks"], s["bytes"]))
for line in sorted(out):
    print(line)
