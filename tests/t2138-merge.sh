#!/bin/sh
# t2138-merge.sh - the map and reduce steps of a job of many processes:
# `memprov leaks --json TRACE` on each trace, then `memprov merge` of the
# summaries alone, gives the report `memprov leaks DIR` gives on the
# traces (text and JSON), whatever the number of workers reading them
# (--jobs) and whether the summaries are files or JSON Lines; the
# summaries carry the host, and a job on two hosts says where each
# process ran; `growth DIR` merges each process's growing sites (a
# Python pool where 2 workers of 4 grow on one line) and merges from
# `growth --json` summaries the same way, and `peak DIR` too; `html DIR`
# writes an index page and a page per process; bad summaries are errors that
# name the file and the place.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

# map_step REPORT DIR OUT: `memprov REPORT --json` of each trace of DIR into OUT/
map_step() {
	mkdir "$3" &&
	for t in "$2"/*.trace; do
		memprov "$1" --json "$t" >"$3/$(basename "$t").json" 2>/dev/null || return 1
	done
}

test_expect_success 'a C pool of 4 where worker 2 leaks: a summary per trace' '
	timeout 60 "$MEMPROV_CLI" run -d pool -- "$BIN/forkinherit" pool 4 2 >out 2>/dev/null &&
	test $(ls pool/*.trace | wc -l) = 5 &&
	map_step leaks pool sum &&
	first=$(ls sum | head -1) &&
	jget --check "sum/$first" "host=$(hostname)" &&
	parent=$(jget "sum/$first" pid) &&
	test $(cat sum/*.json | grep -c "\"ppid\":$parent,") = 4 &&
	cat sum/*.json | grep "\"key\":.*\"text\":"
'

test_expect_success 'merge of the summaries: the report of leaks DIR, text and JSON' '
	memprov leaks pool >dir.txt &&
	memprov merge sum/*.json >merged.txt &&
	test_cmp dir.txt merged.txt &&
	grep "^  #1 heap malloc: 1 process of 5, 3 blocks, 12.0 KiB (12,288 B): 3 definitely lost$" merged.txt &&
	grep "^lost at exit (definitely and indirectly, where a scan at exit classified blocks): 12.0 KiB (12,288 B) in 3 blocks, in 1 process; by class: definitely lost 12.0 KiB (12,288 B), indirectly lost 0 B, possibly lost 0 B, still reachable 0 B$" merged.txt &&
	test $(grep -c "worker_leaks .*forkinherit.c:" merged.txt) = 1 &&
	leaker=$(sed -n "s/^child=//p" out | sed -n 3p) &&
	grep "^      pid $leaker: 3 blocks, 12.0 KiB (12,288 B) (" merged.txt &&
	memprov leaks --json pool >dir.json &&
	memprov merge --json sum/*.json >merged.json &&
	test_cmp dir.json merged.json &&
	jget --check merged.json of=leaks traces=5 processes=5 holding=1 bytes=12288 blocks=3 \
		"=len(j[\"sites\"])==1" sites.0.bytes=12288 "sites.0.processes.0.pid=$leaker" \
		sites.0.reach.definitely_lost.bytes=12288 reach.definitely_lost.blocks=3 \
		"=len(j[\"process_list\"])==5" \
		"=sorted(p[\"inherited_bytes\"] for p in j[\"process_list\"])==[0, 1000, 1000, 1000, 1000]"
'

test_expect_success 'the same report with 1 worker or 3, and from one file of JSON Lines' '
	memprov leaks --jobs 1 pool >j1.txt &&
	memprov leaks --jobs 3 pool >j3.txt &&
	test_cmp dir.txt j1.txt &&
	test_cmp dir.txt j3.txt &&
	cat sum/*.json >all.jsonl &&
	memprov merge all.jsonl >lines.txt &&
	test_cmp dir.txt lines.txt &&
	# a summary given twice is counted once (it made "2 processes of 2")
	memprov merge all.jsonl sum/*.json >twice.txt 2>twice.err &&
	test_cmp dir.txt twice.txt &&
	test $(grep -c "again: counted once$" twice.err) = 5 &&
	test_status 2 memprov leaks --jobs 0 pool 2>err && grep "jobs" err
'

test_expect_success 'two hosts: each process says where it ran' '
	mkdir hosts &&
	for f in sum/*.json; do
		sed "s/\"host\":\"[^\"]*\"/\"host\":\"node7\"/" "$f" >"hosts/a-$(basename "$f")" &&
		sed "s/\"host\":\"[^\"]*\"/\"host\":\"node8\"/" "$f" >"hosts/b-$(basename "$f")" || return 1
	done &&
	leaker=$(sed -n "s/^child=//p" out | sed -n 3p) &&
	memprov merge hosts/*.json >hosts.txt &&
	cat hosts.txt &&
	grep "^10 traces, 10 processes" hosts.txt &&
	grep "^  #1 heap malloc: 2 processes of 10, 6 blocks, 24.0 KiB (24,576 B): 6 definitely lost$" hosts.txt &&
	grep "^      pid $leaker on node7: 3 blocks" hosts.txt &&
	grep "^      pid $leaker on node8: 3 blocks" hosts.txt
'

test_expect_success 'growth DIR: 2 of 4 Python workers grow on one line; merge of growth summaries agrees' '
	timeout 120 "$MEMPROV_CLI" run -d grow --mark-on __main__:step -- \
		/usr/bin/python3 "$TOP/tests/py/mp_grow.py" >/dev/null 2>&1 &&
	memprov growth grow >grow.txt &&
	cat grow.txt &&
	grep "^1 growing site, merged across processes" grow.txt &&
	grep "^  #1 heap malloc: 2 processes of 5, +2.1 MiB (+2,200,022 B) over their windows" grow.txt &&
	test $(grep -c "^      step .*mp_grow.py:11$" grow.txt) = 1 &&
	test $(grep -c "^      pid [0-9]*: +1.0 MiB (+1,100,011 B), 97.7 KiB (100,001 B) per mark, confidence" grow.txt) = 2 &&
	map_step growth grow gsum &&
	memprov merge gsum/*.json >gmerged.txt &&
	test_cmp grow.txt gmerged.txt &&
	memprov growth --json grow >grow.json &&
	jget --check grow.json of=growth processes=5 holding=2 growth_bytes=2200022
'

test_expect_success 'peak DIR: what each process held at its peak, merged; merge of peak summaries agrees' '
	memprov peak pool >peak.txt &&
	cat peak.txt &&
	grep "^  #1 heap malloc: 1 process of 5, 3 blocks, 12.0 KiB (12,288 B)$" peak.txt &&
	grep "^  #2 heap malloc: 3 processes of 5, 3 blocks, 12.0 KiB (12,288 B)$" peak.txt &&
	grep "^  #3 heap malloc: 5 processes of 5, 5 blocks, 4.9 KiB (5,000 B)$" peak.txt &&
	map_step peak pool psum &&
	memprov merge psum/*.json >pmerged.txt &&
	test_cmp peak.txt pmerged.txt &&
	memprov peak --json pool >peak.json &&
	jget --check peak.json of=peak processes=5 holding=5 bytes=29576
'

test_expect_success 'html DIR: an index with the tree, each pid linked to its own page' '
	mkdir pages &&
	memprov html -o pages/job.html pool 2>html.err &&
	grep "HTML index of the processes. pages written to pages/job.html" html.err &&
	test $(ls pages | wc -l) = 6 &&
	test $(grep -c "^<tr><td style=\"padding-left:" pages/job.html) = 5 &&
	test $(grep -c "^<tr><td style=\"padding-left:3em\">" pages/job.html) = 4 &&
	for f in $(sed -n "s/.*<a href=\"\([^\"]*\)\".*/\1/p" pages/job.html); do
		test -s "pages/$f" && grep -q "memprov-data" "pages/$f" || return 1
	done &&
	leaker=$(sed -n "s/^child=//p" out | sed -n 3p) &&
	grep -q "worker_leaks" "pages/job.memprov.$leaker.html" &&
	grep "^  #1 heap malloc: 1 process of 5, 3 blocks, 12.0 KiB (12,288 B): 3 definitely lost$" pages/job.html &&
	test_status 2 memprov html -o - pool 2>err && grep "pages are files" err
'

test_expect_success 'the merged reports validate against schemas/merge.schema.json' '
	/usr/bin/python3 -c "import jsonschema" 2>/dev/null || exit 0
	"$TOP/tests/helper/validate-json.py" dir.json grow.json peak.json sum/*.json psum/*.json
'

test_expect_success 'a run directory with a cut trace and a stray file: said on stderr, the rest reported' '
	cp -r pool odd &&
	head -c 100 "$(ls pool/*.trace | head -1)" >odd/memprov.99999.trace &&
	echo notes >odd/README &&
	memprov leaks odd >odd.txt 2>odd.err &&
	grep "odd/memprov.99999.trace. is not a readable memprov trace (no memprov trace header): left out" odd.err &&
	test $(wc -l <odd.err) = 1 &&
	grep "^5 traces, 5 processes" odd.txt
'

test_expect_success 'an empty trace in a run directory (a process killed as it started) is left out, said so' '
	cp -r pool odd2 &&
	: >odd2/memprov.99998.trace &&
	memprov leaks odd2 >odd2.txt 2>odd2.err &&
	grep "odd2/memprov.99998.trace. is not a readable memprov trace (empty: the process ended before memprov wrote its header): left out" odd2.err &&
	test $(wc -l <odd2.err) = 1 &&
	grep "^5 traces, 5 processes" odd2.txt
'

test_expect_success 'bad summaries: mixed kinds, not JSON, not a summary, missing' '
	test_status 1 memprov merge sum/*.json gsum/*.json >/dev/null 2>err &&
	grep "a growth summary among leaks summaries" err &&
	printf "{\"schema\": \"memprov.leaks/1\",\n \"pid\": 12,, }\n" >bad.json &&
	test_status 1 memprov merge bad.json 2>err &&
	grep "^memprov: error: .bad.json.: not JSON: line 2, column 12: " err &&
	echo "{\"schema\":\"memprov.stats/1\"}" >stats.json &&
	test_status 1 memprov merge stats.json 2>err &&
	grep "stats.json.*not a memprov summary" err &&
	test_status 1 memprov merge nothere.json 2>err &&
	grep "cannot open .nothere.json." err &&
	test_status 2 memprov merge 2>err && grep "no summary given" err &&
	test_status 2 memprov growth --folded pool 2>err && grep "folded takes one trace" err &&
	test_status 2 memprov peak --folded pool 2>err && grep "folded takes one trace" err
'

test_done
