# sites.py FILE.json SCRIPT: the leak sites whose Python stack passes
# through SCRIPT (a basename; *: every file), one line each:
#   KIND BLOCKS BYTES func@script:line < func@script:line ...
# (frames of SCRIPT only, innermost first), sorted by bytes then text,
# after a first line "at WHEN" (the report's instant: main-end, exit...).
import json
import os
import sys

with open(sys.argv[1]) as f:
    report = json.load(f)
script = sys.argv[2]
print("at", report.get("at"))
lines = []
for s in report["sites"]:
    frames = ["%s@%s:%s" % (p["function"], os.path.basename(p["file"]), p["line"])
              for p in s.get("python") or []
              if script == "*" or os.path.basename(p["file"] or "") == script]
    if frames:
        lines.append((s["bytes"], "%s %d %d %s" % (s["kind"], s["blocks"], s["bytes"],
                                                   " < ".join(frames))))
for _, line in sorted(lines, key=lambda x: (-x[0], x[1])):
    print(line)
