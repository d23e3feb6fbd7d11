#!/bin/sh
# make-corpus.sh - (re)make the fuzzers' seed corpus in fuzz/corpus/:
# every trace description in the analyzer tests (tests/t1*.sh heredocs)
# through tracegen with 4 KiB chunks, in format version 1 (gen-*) and 2
# (gen2-*), and the first 16 KiB of real traces of a few test programs
# under libmemprov.so (real-*, version 2; a cut trace: still valid input).
# real-v1-* are real traces of memprov before format version 2, kept as
# they are: this memprov cannot write them again. Run from the top of the
# tree after `make test` built tests/bin.
set -eu
out=fuzz/corpus/trace
mkdir -p "$out" fuzz/corpus/options
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp" tests/t1*.sh <<'PY'
import re, sys, os
tmp = sys.argv[1]
n = 0
for path in sys.argv[2:]:
    text = open(path).read()
    for m in re.finditer(r'<<-?\s*\\?EOF[^\n]*\n(.*?)\n\s*EOF', text, re.S):
        body = "\n".join(l.lstrip("\t") for l in m.group(1).splitlines())
        if "thread" not in body and "header" not in body:
            continue
        lines = body.splitlines()
        if lines and lines[0].startswith("header"):
            if "chunk=" not in lines[0]:
                lines[0] += " chunk=4096"
        else:
            lines.insert(0, "header chunk=4096")
        n += 1
        open(os.path.join(tmp, "d%03d.txt" % n), "w").write("\n".join(lines) + "\n")
PY
for d in "$tmp"/d*.txt; do
	b=$(basename "$d" .txt)
	tests/bin/tracegen -o "$out/gen-$b.trace" <"$d" 2>/dev/null || rm -f "$out/gen-$b.trace"
	TRACEGEN_VERSION=2 tests/bin/tracegen -o "$out/gen2-$b.trace" <"$d" 2>/dev/null ||
		rm -f "$out/gen2-$b.trace"
	# the same description twice: nothing new for the fuzzer
	if [ -f "$out/gen2-$b.trace" ] && [ -f "$out/gen-$b.trace" ] &&
		cmp -s "$out/gen-$b.trace" "$out/gen2-$b.trace"; then
		rm -f "$out/gen2-$b.trace"
	fi
done
run() {
	name=$1 && shift
	MEMPROV_OUTPUT="$tmp/$name.trace" LD_PRELOAD=$PWD/interpose/libmemprov.so "$@" \
		>/dev/null 2>&1 || true
	head -c 16384 "$tmp/$name.trace" >"$out/real-$name.trace"
}
run leak3 tests/bin/leak3
run churn tests/bin/churn 2 200
run mmaps tests/bin/mmaps
run libc_edge tests/bin/libc_edge
run py /usr/bin/python3 -c 'x = [bytearray(100) for i in range(10)]'
run threads tests/bin/churn 4 300
# options: NUL-separated argv, first byte picks the subcommand
printf '\000--json\000--min-bytes\0001.5GiB' >fuzz/corpus/options/growth-min
printf '\001--json\000t' >fuzz/corpus/options/stats-json
printf '\003--points\00020\000--skip\0003\000--after\000x\000t' >fuzz/corpus/options/growth-points
printf '\005--min-gap\00010M\000t' >fuzz/corpus/options/timeline-gap
printf '\00610K' >fuzz/corpus/options/size-10k
printf '\0071e400' >fuzz/corpus/options/size-huge
printf '\000--all\000--native\000--python-only\000a\000b' >fuzz/corpus/options/leaks-many
ls "$out" | wc -l
