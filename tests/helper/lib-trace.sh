# lib-trace.sh - sourced by the analyzer tests (tests/t1*.sh) after
# test-lib.sh: build traces from text and read figures out of JSON.
#
#   gen NAME [tracegen options] <<EOF ... EOF   writes NAME.trace
#   jget FILE PATH...      print values (dotted paths, list indices)
TRACEGEN=$BIN/tracegen
[ -x "$TRACEGEN" ] || test_skip "tests/bin/tracegen not built (make tests/bin/tracegen)"

gen() {
	name=$1
	shift
	"$TRACEGEN" -o "$name.trace" "$@"
}

jget() {
	/usr/bin/python3 - "$@" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for path in sys.argv[2:]:
    v = j
    if path.startswith('='):
        v = eval(path[1:], {'j': j, 'len': len, 'sum': sum})
    else:
        for part in path.split('.'):
            v = v[int(part)] if isinstance(v, list) else v[part]
    print(json.dumps(v) if not isinstance(v, str) else v)
PY
}
