#!/bin/sh
# run.sh - run every tests/tNNNN-*.sh (or those named) and end with one
# line "N passed, N failed". Each script is bounded by a timeout.
cd "$(dirname "$0")" || exit 2
MEMPROV_RESULTS=$(pwd)/out/results
mkdir -p out && : >"$MEMPROV_RESULTS"
export MEMPROV_RESULTS
[ $# -gt 0 ] || set -- t[0-9]*.sh
for t in "$@"; do
	timeout -k 10 "${MEMPROV_TEST_TIMEOUT:-600}" sh "$t" || {
		rc=$?
		[ $rc = 124 ] && { echo "not ok - $t: timed out"; echo "0 1 0" >>"$MEMPROV_RESULTS"; }
		# a script that died without test_done still counts as a failure
		[ $rc != 1 ] && [ $rc != 124 ] && ! tail -n 1 "$MEMPROV_RESULTS" | grep -q . && echo "0 1 0" >>"$MEMPROV_RESULTS"
	}
done
awk '{p += $1; f += $2; s += $3} END {
	printf "%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; print "";
	exit f > 0 }' "$MEMPROV_RESULTS"
