#!/bin/sh
# t5020-html.sh - `memprov html`: one self-contained file whose figures are
# growth's and timeline's, rendered by headless Chromium with no console
# error, the script's summary in #status, and a screenshot whose chart area
# holds drawn data. Skips without chromium (scripts/install-deps.sh html).
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

[ -x "$BIN/grow" ] || test_skip "tests/bin/grow not built (make test)"

chrome() {
	timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$TRASH/chrome.XXXXXX")" "$@"
}

test_expect_success 'the page is one file with no external resource; its figures are growth'"'"'s' '
	timeout 60 env MEMPROV_OUTPUT=$TRASH/leak.trace MEMPROV_RSS_INTERVAL_MS=1 LD_PRELOAD=$MEMPROV_LIB "$BIN/grow" 50 &&
	memprov html -o report.html leak.trace &&
	! grep -Ei "<(script|link|img)[^>]+(src|href)=" report.html &&
	! grep -Ei "https?://" report.html &&
	memprov growth --json leak.trace >g.json &&
	/usr/bin/python3 - <<-\EOF
	import json, re
	html = open("report.html").read()
	data = json.loads(re.search(r"<script id=\"memprov-data\" type=\"application/json\">(.*?)</script>", html, re.S).group(1))
	g = json.load(open("g.json"))
	assert len(data["suspects"]) == len(g["suspects"]) == 1, data["suspects"]
	a, b = data["suspects"][0], g["suspects"][0]
	assert a["growth_bytes"] == b["growth_bytes"] == 200704
	assert a["slope_bytes"] == "4096" and b["slope_bytes"] == 4096
	assert a["slope_blocks"] == "1" and a["end_bytes"] == b["end_bytes"] and a["end_blocks"] == 50
	assert "leak_a" in a["where"]
	assert data["flame"]["v"] == 200704 and data["flame"]["c"][0]["c"][0]["n"].startswith("leak_a ")
	assert len(data["marks"]) == 50 and len(data["timeline"]["ns"]) == 200
	assert data["timeline"]["kinds"]["heap"][-1] == 204800 + 8000
	EOF
'

command -v chromium >/dev/null 2>&1 || test_skip "chromium is not installed (scripts/install-deps.sh html)"

test_expect_success 'Chromium renders it: no console error, the script filled the page' '
	chrome --enable-logging=stderr --v=0 --dump-dom "file://$TRASH/report.html" >dom.html 2>chrome.log &&
	! grep -E "Uncaught|CONSOLE.*[Ee]rror" chrome.log &&
	grep -F "id=\"status\" data-ok=\"1\">rendered: 200 timeline points, 2 series, 1 suspects, 3 flame frames<" dom.html &&
	grep -F "<td>+200704</td><td>4096</td><td>1</td><td>mark #0 \"iter\"</td><td>204800</td><td>50</td><td>1.00</td>" dom.html
'

test_expect_success 'a screenshot shows the chart with data' '
	chrome --window-size=1200,900 --screenshot="$TRASH/shot.png" "file://$TRASH/report.html" 2>/dev/null &&
	/usr/bin/python3 - <<-\EOF
	import struct, zlib
	raw = open("shot.png", "rb").read()
	assert raw[:8] == b"\x89PNG\r\n\x1a\n"
	pos, idat = 8, b""
	while pos < len(raw):
	    n, typ = struct.unpack(">I4s", raw[pos:pos + 8])
	    body = raw[pos + 8:pos + 8 + n]
	    if typ == b"IHDR":
	        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
	    elif typ == b"IDAT":
	        idat += body
	    pos += 12 + n
	assert depth == 8 and ctype in (2, 6), (depth, ctype)
	bpp = 3 if ctype == 2 else 4
	data, stride, prev, rows, o = zlib.decompress(idat), w * bpp, bytearray(w * bpp), [], 0
	for y in range(h):
	    f, line = data[o], bytearray(data[o + 1:o + 1 + stride]); o += 1 + stride
	    for i in range(stride):
	        a = line[i - bpp] if i >= bpp else 0
	        b = prev[i]; c = prev[i - bpp] if i >= bpp else 0
	        if f == 1: line[i] = (line[i] + a) & 255
	        elif f == 2: line[i] = (line[i] + b) & 255
	        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
	        elif f == 4:
	            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
	            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
	    rows.append(bytes(line)); prev = line
	# the chart: rows 120..400 of the page, right of the axis labels
	colors, inked, blue = set(), 0, 0
	for y in range(120, 400):
	    r = rows[y]
	    for x in range(100, w - 40):
	        px = r[x * bpp:x * bpp + 3]
	        colors.add(px)
	        if px != b"\xff\xff\xff": inked += 1
	        if px[2] > 150 and px[0] < 80: blue += 1
	print(len(colors), inked, blue)
	assert len(colors) >= 8 and inked >= 2000 and blue >= 200, (len(colors), inked, blue)
	EOF
'

test_done
