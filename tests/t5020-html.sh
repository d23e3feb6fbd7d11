#!/bin/sh
# t5020-html.sh - `memprov html`: one self-contained file whose figures are
# growth's and leaks', named on stderr; in headless Chromium it draws
# itself with no console error, its tables say what the text reports say
# (in human units with the exact bytes), the chart has ink, and a person's
# steps (open a row, sort, search) give the right answers; without
# JavaScript, what the end set apart is said as `leaks` says it. Skips without
# chromium (scripts/install-deps.sh html).
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"
. "$TOP/tests/helper/lib-chrome.sh"

[ -x "$BIN/grow" ] || test_skip "tests/bin/grow not built (make test)"

test_expect_success 'one file, no external resource, named on stderr; its figures are growth'"'"'s and leaks'"'"'' '
	timeout 60 env MEMPROV_OUTPUT=$TRASH/leak.trace MEMPROV_RSS_INTERVAL_MS=1 LD_PRELOAD=$MEMPROV_LIB "$BIN/grow" 50 &&
	memprov html -o report.html leak.trace 2>err &&
	echo "memprov: HTML report written to report.html" >expect && test_cmp expect err &&
	! grep -Ei "<(script|link|img)[^>]+(src|href)=" report.html &&
	! grep -Ei "https?://" report.html &&
	memprov growth --json leak.trace >g.json &&
	memprov leaks --json leak.trace >l.json &&
	/usr/bin/python3 - <<-\EOF
	import json, re
	html = open("report.html").read()
	data = json.loads(re.search(r"<script id=\"memprov-data\" type=\"application/json\">(.*?)</script>", html, re.S).group(1))
	g, l = json.load(open("g.json")), json.load(open("l.json"))
	assert data["schema"] == "memprov.html/1"
	assert len(data["suspects"]) == len(g["suspects"]) == 1, data["suspects"]
	a, b = data["suspects"][0], g["suspects"][0]
	assert a["growth_bytes"] == b["growth_bytes"] == 200704
	assert a["slope_bytes"] == b["slope_bytes"] == 4096 and a["slope_blocks"] == 1
	assert a["end_bytes"] == b["end_bytes"] and a["end_blocks"] == 50 and a["kept"] is None
	frames = data["frames"]
	assert frames[a["f"][0]][0] == "leak_a" and a["np"] == 0, [frames[i] for i in a["f"]]
	sites = {frames[s["f"][0]][0]: (s["blocks"], s["bytes"]) for s in data["leaks"]["sites"]}
	want = {s["frames"][0]["function"]: (s["blocks"], s["bytes"]) for s in l["sites"]}
	assert sites == want == {"leak_a": (50, 204800), "cache_b": (8, 8000)}, (sites, want)
	assert data["leaks"]["at"] == l["at"] == "exit"
	assert data["leaks"]["totals"]["heap"]["bytes"] == 212800
	assert len(data["marks"]) == 50 and len(data["timeline"]["ns"]) == 400
	assert data["timeline"]["kinds"]["heap"][-1] == 204800 + 8000
	assert data["window"]["points"] == 50 and data["window"]["from_ns"] < data["window"]["to_ns"]
	EOF
'

test_expect_success 'the script and style sheet are analyzer/html/'"'"'s files, as they are' '
	/usr/bin/python3 - "$TOP/analyzer/html" <<-\EOF &&
	import os, re, sys
	d = sys.argv[1]
	def esc(path):
	    return open(os.path.join(d, path)).read().replace("</", "<\\/")
	html = open("report.html").read()
	js = re.findall(r"<script>\n(.*?)</script>", html, re.S)
	css = re.search(r"<style>\n(.*?)</style>", html, re.S).group(1)
	want = "".join(esc(f) for f in ("fmt.js", "view.js", "timeline.js", "flame.js", "main.js"))
	assert len(js) == 1 and js[0] == want, "the script in the page is not analyzer/html/*.js"
	assert css == esc("report.css"), "the style sheet in the page is not analyzer/html/report.css"
	EOF
	if command -v node >/dev/null; then
		for f in "$TOP"/analyzer/html/*.js; do node --check "$f" || exit 1; done
	fi
'

command -v chromium >/dev/null 2>&1 || test_skip "chromium is not installed (scripts/install-deps.sh html)"

test_expect_success 'Chromium draws it: no console error, no debug line, the chart inked' '
	chrome --enable-logging=stderr --v=0 --dump-dom "file://$TRASH/report.html" >dom.html 2>chrome.log &&
	! grep -E "Uncaught|CONSOLE.*[Ee]rror" chrome.log &&
	grep -F "data-ok=\"1\"" dom.html &&
	drive report.html leak_a &&
	/usr/bin/python3 - <<-\EOF
	import json
	r = json.load(open("report.json"))
	assert r["ok"] == "1" and r["status_hidden"] and r["error"] is None, r
	assert not r["visible_text_has_debug"]
	c = r["chart"]
	assert c["ink"] >= 5000 and c["blue"] >= 300, c
	t = r["timeline"]
	# heap, RSS, and the anonymous RSS the gap is measured on
	assert t["series"] == 3 and t["marks"] == 50 and 1 <= t["labelled"] < 50, t
	assert "anonymous RSS (less file pages)" in r["legend"], r["legend"]
	# round ticks: evenly spaced by a power of two bytes, each a short figure
	units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
	v = [float(x.split()[0]) * units[x.split()[1]] for x in t["yticks"]]
	steps = {v[i + 1] - v[i] for i in range(len(v) - 1)}
	assert v[0] == 0 and len(steps) == 1 and len(v) <= 7, t["yticks"]
	step = steps.pop()
	assert step == int(step) and int(step) & (int(step) - 1) == 0, t["yticks"]
	assert all(len(x.split()[0]) <= 4 for x in t["yticks"]), t["yticks"]
	assert all(x.endswith(" ms") or x.endswith(" s") or x.endswith(" \u00b5s") for x in t["xticks"]), t["xticks"]
	assert "50 marks (" in r["legend"] and "judged window: mark #0" in r["legend"], r["legend"]
	EOF
'

test_expect_success 'its tables: human units with exact bytes, the allocating line, the stack on click' '
	line=$(grep -n "return malloc(4096)" "$TOP/tests/growth/grow.c" | cut -d: -f1) &&
	/usr/bin/python3 - "$line" <<-\EOF
	import json, sys
	r, line = json.load(open("report.json")), sys.argv[1]
	g = r["growth"]
	assert g["rows"] == 1 and g["cells"][0][1:] == ["heap malloc", "leak_a grow.c:" + line, "+196.0 KiB", "4.0 KiB", "1",
	                                               "mark #0 \"iter\"", "200.0 KiB", "50", "1.00"], g
	L = r["leaks"]
	assert L["rows"] == 2 and not L["more"], L
	assert L["bytes"] == ["200.0 KiB (204,800 B)", "7.8 KiB (8,000 B)"], L["bytes"]
	assert L["where"][0] == "leak_a grow.c:" + line, L["where"]
	assert L["badges"] == ["growing", ""], L["badges"]
	assert "leak_a" in L["open_stack"] and "main" in L["open_stack"] and L["closed"], L
	assert L["bytes_after_sort"] == ["7.8 KiB (8,000 B)", "200.0 KiB (204,800 B)"], L
	assert L["sort_state"][4] == "ascending", L["sort_state"]
	assert r["cards"][0].startswith("GROWING SITES 1 growing +4.0 KiB/mark at leak_a"), r["cards"]
	EOF
'

test_expect_success 'the flame graph: search totals the matches, zoom and reset' '
	/usr/bin/python3 - <<-\EOF
	import json
	f = json.load(open("report.json"))["flame"]
	assert f["views"] == ["growth", "live"], f["views"]
	assert f["what"] == "Growth of the growing sites over the window: 196.0 KiB (200,704 B) in all.", f["what"]
	s = f["search"]
	assert s["found"] == "1 frame match: 196.0 KiB (200,704 B), 100.0% of all", s
	assert s["bytes"] == 200704 and s["hits"] == 1 and s["dimmed"] >= 2, s
	assert f["crumbs_zoomed"].startswith("all \u203a main") and f["crumbs_reset"] == "all", f
	assert f["names_unfolded"] == ["all", "main", "leak_a"], f["names_unfolded"]
	EOF
'

test_expect_success 'a screenshot has the page drawn' '
	shot "$TRASH/report.html" shot.png 1200 900 &&
	/usr/bin/python3 - <<-\EOF
	import struct, zlib
	raw = open("shot.png", "rb").read()
	assert raw[:8] == b"\x89PNG\r\n\x1a\n"
	w, h = struct.unpack(">II", raw[16:24])
	assert (w, h) == (1200, 900), (w, h)
	assert len(raw) > 20000, len(raw)
	EOF
'

test_expect_success 'without JavaScript: what was set apart at the end, as leaks says it' '
	printf "import faulthandler\nkept = []\ndef f():\n    kept.append(bytearray(50000))\n    faulthandler.dump_traceback_later(60)\nf()\nfaulthandler.cancel_dump_traceback_later()\n" >sa.py &&
	timeout 60 "$MEMPROV_CLI" run -o sa.trace -- /usr/bin/python3 sa.py 2>/dev/null &&
	memprov html -o sa.html sa.trace 2>/dev/null &&
	memprov leaks sa.trace >sa.leaks &&
	/usr/bin/python3 -c "
import re, sys
html = open(\"sa.html\").read()
ns = re.search(r\"<noscript>(.*?)</noscript>\", html, re.S).group(1)
para = re.search(r\"<p id=.set-apart.[^>]*>(.*?)</p>\", ns, re.S).group(1).split(chr(10))[1:]
want = [l for l in open(\"sa.leaks\").read().split(chr(10))
        if l.startswith((\"interpreter and module state:\", \"kept until exit on purpose\", \"Python arenas\"))]
print(para, want)
assert [l for l in para if l] == want and len(want) >= 2
assert html.index(\"</noscript>\") > html.index(\"set-apart\")
"
'

test_done
