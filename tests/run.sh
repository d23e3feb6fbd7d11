#!/bin/sh
# run.sh - run every tests/tNNNN-*.sh (or those named) and end with one
# line "N passed, N failed". Each script is bounded by a timeout; a script
# that times out or dies before test_done counts as one failure.
cd "$(dirname "$0")" || exit 2
MEMPROV_RESULTS=$(pwd)/out/results
mkdir -p out && : >"$MEMPROV_RESULTS"
export MEMPROV_RESULTS
[ $# -gt 0 ] || set -- t[0-9]*.sh
for t in "$@"; do
	before=$(wc -l <"$MEMPROV_RESULTS")
	timeout -k 10 "${MEMPROV_TEST_TIMEOUT:-600}" sh "$t"
	rc=$?
	after=$(wc -l <"$MEMPROV_RESULTS")
	if [ "$after" = "$before" ]; then
		echo "not ok - $t: ended with status $rc before test_done"
		echo "0 1 0" >>"$MEMPROV_RESULTS"
	fi
done
awk '{p += $1; f += $2; s += $3} END {
	printf "%d passed, %d failed", p, f; if (s) printf ", %d skipped", s; print "";
	exit f > 0 }' "$MEMPROV_RESULTS"
