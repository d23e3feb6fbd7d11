#!/bin/sh
# t1070-layers.sh - scripts/check-layers.py: the analyzer's file-to-file
# call graph (nm on analyzer/*.o) has no cycle, no file of interpose/
# calls a file of a higher layer; and the check itself catches a cycle,
# and a call to a higher layer, in tiny objects made here.
. "$(dirname "$0")/test-lib.sh"
CHECK=$TOP/scripts/check-layers.py
ls "$TOP"/analyzer/*.o >/dev/null 2>&1 || test_skip "analyzer objects not built (make)"
command -v nm >/dev/null || test_skip "nm missing (binutils)"

test_expect_success 'analyzer/: no cycle between files; interpose/: no call to a higher layer' '
	/usr/bin/python3 "$CHECK" --interpose >out &&
	cat out &&
	grep -x "check-layers: ok (no cycle in analyzer, layers hold in interpose)" out
'

test_expect_success 'interpose/: the layers the design document draws' '
	/usr/bin/python3 "$CHECK" --graph "$TOP/interpose" >igraph &&
	grep "^record.c -> stack.c " igraph && grep "^record.c -> trace_writer.c " igraph &&
	grep "^stack.c -> unwind.c " igraph && grep "^trace_writer.c -> trace_file.c " igraph &&
	! grep "^trace_writer.c -> stack.c " igraph && ! grep "^unwind.c -> stack.c " igraph &&
	! grep "^unwind.c -> python" igraph && ! grep "^trace_file.c -> trace_writer.c " igraph
'

test_expect_success 'the graph has the edges the design says, and not their reverse' '
	/usr/bin/python3 "$CHECK" --graph "$TOP/analyzer" >graph &&
	grep "^main.c -> report_leaks.c (command_leaks)" graph &&
	grep "^report.c -> growth.c " graph && ! grep "^growth.c -> report.c " graph &&
	grep "^gate.c -> gate_report.c " graph && ! grep "^gate_report.c -> gate.c " graph &&
	grep "^report_html.c -> timeline.c " graph &&
	! grep -E "^report_html.c -> (report_growth|report_timeline).c " graph &&
	! grep -E " -> main.c " graph
'

# obj DIR NAME 'LAYER LINE' 'C BODY': DIR/NAME.c with that opening comment, compiled
obj() {
	mkdir -p "$1" &&
	printf "/*\n * %s.c - a test file.\n%b */\n%s\n" "$2" "$3" "$4" >"$1/$2.c" &&
	cc -c -o "$1/$2.o" "$1/$2.c"
}

test_expect_success 'a cycle between two files is caught and printed' '
	obj cyc a "" "int fb(int); int fa(int x) { return x ? fb(x - 1) : 0; }" &&
	obj cyc b "" "int fa(int); int fb(int x) { return fa(x); }" &&
	obj cyc c "" "int fa(int); int fc(void) { return fa(3); }" &&
	st=0 && /usr/bin/python3 "$CHECK" --cycles cyc >out || st=$? &&
	cat out && test $st = 1 &&
	grep -x "cyc: cycle between files: a.c -> b.c -> a.c" out &&
	grep -x "    a.c -> b.c (fb)" out && grep -x "    b.c -> a.c (fa)" out &&
	grep -x "check-layers: 1 breach of the layering rules" out
'

test_expect_success 'the same files without the back-edge pass' '
	obj line a "" "int fb(int); int fa(int x) { return fb(x); }" &&
	obj line b "" "int fb(int x) { return x; }" &&
	obj line c "" "int fa(int); int fc(void) { return fa(3); }" &&
	/usr/bin/python3 "$CHECK" --cycles line >out && cat out &&
	grep -x "check-layers: ok (no cycle in line)" out
'

test_expect_success 'layers: a call to a higher layer and a missing Layer line are caught' '
	obj lay low " * Layer: 1 system helpers\n" "int top(void); int low(void) { return top(); }" &&
	obj lay top " * Layer: 3 hooks\n" "int low(void); int mid(void); int top(void) { return low() + mid(); }" &&
	obj lay mid "" "int mid(void) { return 2; }" &&
	st=0 && /usr/bin/python3 "$CHECK" --layers lay >out || st=$? &&
	cat out && test $st = 1 &&
	grep -x "lay: low.c (layer 1 system helpers) calls top.c (layer 3 hooks), a higher layer" out &&
	grep -x "lay: mid.c has no \" \* Layer: N name\" line in its opening comment" out &&
	! grep "top.c (layer 3 hooks) calls" out &&
	grep -x "check-layers: 2 breaches of the layering rules" out
'

test_expect_success 'layers: calls downwards and within a layer pass' '
	obj down low " * Layer: 1 system helpers\n" "int low(void) { return 1; }" &&
	obj down mid " * Layer: 2 storage\n" "int low(void); int mid2(void); int mid(void) { return low() + mid2(); }" &&
	obj down mid2 " * Layer: 2 storage\n" "int mid2(void) { return 2; }" &&
	obj down top " * Layer: 3 hooks\n" "int low(void); int mid(void); int top(void) { return low() + mid(); }" &&
	/usr/bin/python3 "$CHECK" --layers down >out && cat out &&
	grep -x "check-layers: ok (layers hold in down)" out
'

test_done
