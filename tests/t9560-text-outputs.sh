#!/bin/sh
# t9560-text-outputs.sh - every text memprov writes is valid UTF-8 and
# parses as what it claims to be, whatever bytes the trace holds: a native
# program and a Python script run from a directory whose name is not
# UTF-8 (a byte 0xff, an overlong NUL, a surrogate, a code point past
# U+10FFFF, a cut sequence, a stray continuation byte), with such bytes in
# the command line, the Python file name and the mark labels. Every --json
# report passes a strict JSON parser, the JUnit file passes xmllint, the
# annotations, the HTML page and the text reports made of trace strings
# (stats, timeline: a site's frames are not checked here) pass iconv. A mark label holding "<!--<script>" and "</script>" cannot
# break the page: its data parses, labels intact, and Chromium renders it.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/grow" ||
	test_skip "libmemprov.so, memprov or tests/bin/grow not built"
command -v xmllint >/dev/null || test_skip "xmllint missing (scripts/install-deps.sh test)"

BAD=$(printf 'dir-\377-\300\200-\355\240\200-\364\220\200\200-\340\200-\200-end')
DIR=$TRASH/$BAD
PY=$(printf 'app-\377.py')
export BAD DIR PY
mkdir "$DIR"

utf8() { iconv -f UTF-8 -t UTF-8 "$1" >/dev/null; }
json() { /usr/bin/python3 -m json.tool "$1" >/dev/null; }

test_expect_success 'a native program and a Python script run from that directory' '
	cp "$BIN/grow" "$DIR/grow" &&
	cat >"$DIR/$PY" <<-\EOF &&
	import ctypes
	lib = ctypes.CDLL(None)
	kept = []
	def step(i):
	    kept.append(bytearray(10000))
	for i in range(10):
	    step(i)
	    lib.memprov_mark(b"it\xff\xc0\x80 \xed\xa0\x80</script><!--<script>\xe2\x80\xa8&" + str(i).encode())
	EOF
	(cd "$DIR" && timeout 60 "$MEMPROV_CLI" run -o "$TRASH/native.trace" -- ./grow 20 "$(printf "a\377\300\200\001")") &&
	(cd "$DIR" && timeout 60 "$MEMPROV_CLI" run -o "$TRASH/py.trace" -- /usr/bin/python3 "$DIR/$PY" "$(printf "\364\220\200\200")") &&
	memprov dump py.trace | grep -c "^[0-9].* mark " >marks && echo 11 >want && test_cmp want marks
'

test_expect_success 'every --json report parses as strict JSON' '
	for t in native py; do
		for r in leaks stats growth peak timeline; do
			memprov $r --json $t.trace >$r-$t.json && json $r-$t.json || exit 1
		done
	done &&
	memprov diff --json native.trace py.trace >diff.json && json diff.json &&
	memprov diff --growth --json native.trace py.trace >diffg.json && json diffg.json &&
	st=0 && memprov check --json --max-growth 1 native.trace py.trace >check.json || st=$? &&
	test $st = 1 && json check.json &&
	/usr/bin/python3 - <<-\EOF
	import json, os
	j = json.load(open("leaks-py.json"))
	bad = os.environ["BAD"]
	assert j["command"].startswith("/usr/bin/python3 " + os.environ["TRASH"] + "/dir-\ufffd-\ufffd\ufffd-"), ascii(j["command"])
	assert j["command"].endswith(" \ufffd\ufffd\ufffd\ufffd"), ascii(j["command"])
	files = {p["file"] for s in j["sites"] for p in s["python"]}
	assert any(f.endswith(".py") and "app-" in f and "\ufffd" in f for f in files), files
	n = json.load(open("leaks-native.json"))
	assert n["command"].endswith("grow 20 a\ufffd\ufffd\ufffd\u0001"), ascii(n["command"])
	t = json.load(open("timeline-py.json"))
	assert t["marks"][0]["label"] == "it\ufffd\ufffd\ufffd \ufffd\ufffd\ufffd</script><!--<script>\u2028&0", ascii(t["marks"][0]["label"])
	EOF
'

test_expect_success 'the JUnit file passes xmllint; annotations and text reports are UTF-8' '
	st=0 && memprov check --max-growth 1 --junit junit.xml --annotations native.trace py.trace \
		>annot.txt || st=$? &&
	test $st = 1 &&
	xmllint --noout junit.xml &&
	grep -c "<testcase " junit.xml >got && echo 2 >want && test_cmp want got &&
	grep "^::error " annot.txt >only-annot.txt && utf8 only-annot.txt &&
	grep -F "file=$TRASH/dir-" only-annot.txt | grep -F "app-" | grep -F ".py,line=5,title=" &&
	for t in native py; do
		memprov timeline $t.trace >timeline-$t.txt && utf8 timeline-$t.txt &&
		memprov stats $t.trace >stats-$t.txt && utf8 stats-$t.txt || exit 1
	done &&
	grep -F "</script><!--<script>" timeline-py.txt
'

test_expect_success 'the HTML page is UTF-8; its data survives labels that close elements' '
	memprov html -o py.html py.trace && utf8 py.html &&
	memprov html -o native.html native.trace && utf8 native.html &&
	test $(grep -c "</script>" py.html) = 2 &&
	/usr/bin/python3 - <<-\EOF
	import json, re
	html = open("py.html", encoding="utf-8").read()
	m = re.search(r"<script id=\"memprov-data\" type=\"application/json\">(.*?)</script>", html, re.S)
	d = json.loads(m.group(1))
	assert "<" not in m.group(1) and "\u2028" not in m.group(1)
	labels = [x["label"] for x in d["marks"]]
	assert len(labels) == 11 and labels[3].endswith("</script><!--<script>\u2028&3"), ascii(labels[3])
	assert d["command"].startswith("/usr/bin/python3 "), ascii(d["command"])
	EOF
'

test_expect_success 'each kind of invalid sequence becomes U+FFFD as Unicode recommends' '
	. "$TOP/tests/helper/lib-trace.sh" &&
	/usr/bin/python3 - <<-\EOF &&
	import sys
	cases = [b"\xf0\x9f\x98\x80", b"\xf4\x90\x80\x80", b"\xe0\x80\x80", b"\xe2\x82x",
	         b"\x80", b"\xc1\xbf", b"\xef\xbf\xbe", b"\xed\xbf\xbf", b"a\xe2\x82",
	         b"\xf8\x88\x80\x80\x80", b"\x01\x7f\t\\\x22<&>\xe2\x80\xa9"]
	out = open("labels.txt", "wb")
	out.write(b"header state=exited exit=0 cmd=\"run \x01\xef\xbf\xbf \xed\xa0\x80 <&>\"\nthread 1\n")
	for i, c in enumerate(cases):
	    out.write(b"mark ts=%d label=\"%s\"\n" % (100 + i, c.replace(b"\\", b"\\\\").replace(b"\x22", b"\\\x22")))
	out.write(b"stack ts=200 id=7 native=0x1000\nalloc ts=210 addr=0x10 size=8 stack=7\n")
	open("want.txt", "w", encoding="utf-8").write("\n".join(c.decode("utf-8", "replace") for c in cases))
	EOF
	gen labels <labels.txt &&
	memprov timeline --json labels.trace >labels.json && json labels.json &&
	/usr/bin/python3 - <<-\EOF &&
	import json
	got = [m["label"] for m in json.load(open("labels.json"))["marks"]]
	want = open("want.txt", encoding="utf-8").read().split("\n")
	assert got == want, (ascii(got), ascii(want))
	assert got[0] == "\U0001f600" and got[1] == "\ufffd" * 4 and got[3] == "\ufffdx", ascii(got)
	EOF
	st=0 && memprov check --junit labels.xml labels.trace >/dev/null || st=$? && test $st = 1 &&
	xmllint --noout labels.xml &&
	grep -F "$(printf "name=\"run ?\357\277\275 \357\277\275\357\277\275\357\277\275 &lt;&amp;&gt; (labels.trace)\"")" labels.xml
'

command -v chromium >/dev/null 2>&1 || test_skip "chromium is not installed (scripts/install-deps.sh html)"

test_expect_success 'Chromium renders the page whose labels hold </script> and <!--<script>' '
	timeout 90 chromium --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$TRASH/chrome.XXXXXX")" \
		--dump-dom "file://$TRASH/py.html" >dom.html 2>chrome.log &&
	grep -F "data-ok=\"1\"" dom.html &&
	grep -F "data-summary=\"timeline points 400, series " dom.html &&
	grep -F "11 marks (" dom.html
'

test_done
