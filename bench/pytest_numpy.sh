#!/bin/sh
# pytest_numpy.sh OUT - `make bench`'s "pytest" workload: numpy's own
# core/tests/test_nditer.py run by pytest under /usr/bin/python3 (802
# tests with numpy 1.24; every allocation has 50 to 70 Python frames of pytest's
# above it). pytest's output goes to OUT; what is printed is its summary
# line without the duration, which no two runs share. PYTEST_WRAP, when
# set, is a command python3 runs under (bench/run.sh: heaptrack, which
# records only the process it starts). Exits with pytest's status.
out=${1:?usage: pytest_numpy.sh OUT}
tests=$(/usr/bin/python3 -c 'import os, numpy; print(os.path.dirname(numpy.__file__))')/core/tests
${PYTEST_WRAP:-} /usr/bin/python3 -m pytest -q -p no:cacheprovider "$tests/test_nditer.py" >"$out" 2>&1
st=$?
# the summary line (a wrapper may print lines of its own after it)
grep -E '^[= ]*[0-9]+ (passed|failed|error)' "$out" | tail -n 1 |
	sed 's/ in [0-9.]*s\( (.*)\)\{0,1\}//; s/=//g; s/^ *//; s/ *$//'
exit $st
