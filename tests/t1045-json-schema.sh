#!/bin/sh
# t1045-json-schema.sh - every --json report names its schema
# ("schema": "memprov.REPORT/1") and validates against
# schemas/REPORT.schema.json (draft 2020-12, python3-jsonschema): leaks,
# stats, growth (with --all, by marks and by time), peak, timeline (with
# and without RSS samples), diff (end and --growth) and check (ok, fail,
# error and an exec'd image; lost memory, --reachable), on a native
# program, a Python script, GPU kinds and traces made by tracegen (cut,
# failed calls, exec, killed by a signal). The schemas
# catch what they should: a doctored report fails.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

/usr/bin/python3 -c 'import jsonschema' 2>/dev/null ||
	test_skip "jsonschema missing for /usr/bin/python3 (scripts/install-deps.sh test)"
[ -x "$BIN/grow" ] || test_skip "tests/bin/grow not built (make test)"
VALIDATE=$TOP/tests/helper/validate-json.py

test_expect_success 'the schemas are valid draft 2020-12 schemas, one per report' '
	ls "$TOP/schemas" >got &&
	printf "%s.schema.json\n" check diff growth leaks merge peak stats timeline >want &&
	test_cmp want got &&
	/usr/bin/python3 - "$TOP/schemas" <<-\EOF
	import json, os, sys, jsonschema
	for f in sorted(os.listdir(sys.argv[1])):
	    s = json.load(open(os.path.join(sys.argv[1], f)))
	    jsonschema.Draft202012Validator.check_schema(s)
	    name = f[:-len(".schema.json")]
	    assert s["properties"]["schema"] == {"const": "memprov.%s/1" % name}, f
	    assert "schema" in s["required"], f
	EOF
'

test_expect_success 'traces: native, Python, no RSS samples, GPU kinds, cut, failed calls, exec' '
	timeout 60 env MEMPROV_OUTPUT=$TRASH/native.trace LD_PRELOAD=$MEMPROV_LIB "$BIN/grow" 30 &&
	timeout 60 env MEMPROV_OUTPUT=$TRASH/lost.trace LD_PRELOAD=$MEMPROV_LIB "$BIN/reach" basic >/dev/null &&
	timeout 60 env MEMPROV_OUTPUT=$TRASH/norss.trace MEMPROV_RSS_INTERVAL_MS=0 LD_PRELOAD=$MEMPROV_LIB "$BIN/grow" 5 noleak &&
	timeout 60 "$MEMPROV_CLI" run -o py.trace -- /usr/bin/python3 -c "
kept = []
for i in range(200):
    kept.append(bytearray(1000 + i))
" 2>/dev/null &&
	gen gpu <<-\EOF &&
	header pid=7 state=exited exit=0 cmd="gpu prog"
	thread 1
	stack ts=100 id=1 native=0x1000
	mark ts=110 label="step"
	alloc ts=120 func=malloc kind=heap addr=0x10 size=100 stack=1
	gpu_alloc ts=130 func=cudaMalloc kind=device addr=0x7000 size=1048576 stack=1 device=0
	gpu_alloc ts=140 func=cudaHostAlloc kind=pinned addr=0x9000 size=4096 stack=1
	gpu_alloc ts=150 func=cudaMalloc kind=device addr=0 size=99999999999 stack=1 result=2 flags=failed
	mark ts=160 label="step"
	gpu_alloc ts=170 func=cudaMalloc kind=device addr=0x8000 size=1048576 stack=1 device=0
	mark ts=180 label="step"
	exit ts=200 status=0
	EOF
	gen cut -t 6000 <<-\EOF &&
	header pid=8 state=running cmd="cut"
	thread 1
	stack ts=100 id=1 native=0x1000
	alloc ts=110 func=malloc kind=heap addr=0x10 size=100 stack=1
	alloc ts=120 func=malloc kind=heap addr=0x20 size=100 stack=1
	EOF
	gen exec <<-\EOF &&
	header pid=9 state=exec cmd="before exec"
	thread 1
	stack ts=100 id=1 native=0x1000
	alloc ts=110 func=malloc kind=heap addr=0x10 size=100 stack=1
	EOF
	gen killed <<-\EOF
	header pid=10 state=killed signal=9 cmd="killed"
	thread 1
	stack ts=100 id=1 native=0x1000
	alloc ts=110 func=malloc kind=heap addr=0x10 size=100 stack=1
	EOF
'

test_expect_success 'every report of every trace validates against its schema' '
	for t in native norss py gpu cut killed; do
		for r in leaks stats peak timeline; do
			memprov $r --json $t.trace >$r-$t.json 2>/dev/null || exit 1
		done
		memprov growth --json --all $t.trace >growth-$t.json 2>/dev/null || exit 1
	done &&
	memprov growth --json --points 5 py.trace >growth-time.json 2>/dev/null &&
	memprov diff --json native.trace py.trace >diff-end.json 2>/dev/null &&
	memprov diff --json --growth native.trace gpu.trace >diff-growth.json 2>/dev/null &&
	st=0 && memprov check --json --max-growth 1 native.trace gpu.trace exec.trace >check-fail.json 2>/dev/null || st=$? &&
	test $st = 1 &&
	memprov check --json --max-leak 1G norss.trace >check-ok.json 2>/dev/null &&
	st=0 && memprov check --json native.trace nosuch.trace >check-error.json 2>/dev/null || st=$? &&
	test $st = 2 &&
	st=0 && memprov check --json lost.trace >check-lost.json || st=$? && test $st = 1 &&
	st=0 && memprov check --json --reachable lost.trace >check-reachable.json || st=$? && test $st = 1 &&
	ls *.json | wc -l >n && echo 38 >want && test_cmp want n &&
	"$VALIDATE" *.json &&
	/usr/bin/python3 - "$TOP/schemas" <<-\EOF
	import glob, json, os, sys
	seen = {}
	for f in glob.glob("*.json"):
	    j = json.load(open(f))
	    seen.setdefault(j["schema"], []).append(f)
	    assert list(j)[0] == "schema", f
	    # every member a report writes is one its schema declares
	    name = j["schema"].split(".")[1].split("/")[0]
	    props = json.load(open(os.path.join(sys.argv[1], name + ".schema.json")))["properties"]
	    extra = [k for k in j if k not in props]
	    assert not extra, (f, extra)
	assert sorted(seen) == ["memprov.%s/1" % r for r in
	    ("check", "diff", "growth", "leaks", "peak", "stats", "timeline")], sorted(seen)
	c = json.load(open("check-fail.json"))
	assert [t["status"] for t in c["traces"]] == ["fail", "fail", "skipped"], c["traces"]
	assert json.load(open("check-error.json"))["traces"][1]["status"] == "error"
	c = json.load(open("check-lost.json"))["traces"][0]
	assert (c["rule"], c["rule_reason"], c["warning"], c["leak_bytes"]) == ("lost", "native", None, 300), c
	assert [(o["class"], o["reach"]["definitely_lost"]["blocks"]) for o in c["offenders"]] == \
	    [("definitely_lost", 3)], c["offenders"]
	assert c["reach"]["classes"]["still_reachable"]["bytes"] >= 1000, c["reach"]
	c = json.load(open("check-reachable.json"))["traces"][0]
	assert (c["rule"], c["rule_reason"], c["leak_bytes"]) == ("live", "reachable-option", 1300), c
	assert sorted(o["class"] for o in c["offenders"]) == ["definitely_lost", "still_reachable"], c["offenders"]
	c = json.load(open("check-fail.json"))["traces"]
	assert [t["rule_reason"] for t in c[:2]] == ["native", "no-scan"], c
	assert json.load(open("timeline-norss.json"))["gap"] is None
	assert json.load(open("stats-cut.json"))["cut_at"] is not None
	assert json.load(open("stats-gpu.json"))["failures"][0]["result"] == 2
	assert json.load(open("growth-time.json"))["by"] == "time"
	for r in ("leaks", "stats"):
	    j = json.load(open(r + "-killed.json"))
	    assert (j["state"], j["signal"]) == ("killed", 9), j
	EOF
'

test_expect_success 'a report that breaks its schema is caught' '
	/usr/bin/python3 - <<-\EOF &&
	import json
	j = json.load(open("leaks-native.json"))
	j["sites"][0]["bytes"] = -1
	json.dump(j, open("bad-bytes.json", "w"))
	j = json.load(open("growth-native.json"))
	del j["suspects"][0]["series"]
	json.dump(j, open("bad-series.json", "w"))
	j = json.load(open("timeline-native.json"))
	j["points"][0]["live"]["heap"] = "12"
	json.dump(j, open("bad-type.json", "w"))
	j = json.load(open("stats-native.json"))
	j["schema"] = "memprov.stats/2"
	json.dump(j, open("bad-version.json", "w"))
	j = json.load(open("check-fail.json"))
	j["traces"][0]["status"] = "maybe"
	json.dump(j, open("bad-enum.json", "w"))
	EOF
	for f in bad-*.json; do
		st=0 && "$VALIDATE" $f >out || st=$? &&
		test $st = 1 && grep -F "$f: " out || exit 1
	done
'

test_done
