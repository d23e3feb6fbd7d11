#!/bin/sh
# t2010-rss-dlopen.sh - resident-memory samples (MP_REC_RSS) written by
# libmemprov.so without a thread: at trace open, at every mark, at exit, and
# when a record passes the sampling interval; dlopen of a bare name from an
# object with DT_RPATH/DT_RUNPATH under the preload; and the byte-interval
# sampling mode (MEMPROV_SAMPLE_BYTES).
. "$(dirname "$0")/test-lib.sh"

[ -f "$MEMPROV_LIB" ] || test_skip "interpose/libmemprov.so not built"
PY=/usr/bin/python3
[ -x "$PY" ] || test_skip "no /usr/bin/python3 for the trace reader"

# Prints the header's rss_interval_ns, then one line per RSS record (in
# time order): "rss TS RSS VM", with "mark LABEL" lines between them.
cat >"$TRASH/rss.py" <<'PYEOF'
import struct, sys
sys.path.insert(0, sys.argv.pop(1))
import mptrace
t = mptrace.Trace(sys.argv[1])
print("interval", t.hdr["rss_interval_ns"])
recs = []
for c in t.chunks():
    first = True
    for ts, typ, fl, fn, kind, b in t.chunk_records(c):
        if first and c["seq"] == 0:
            assert typ == 6, "a thread's first record is THREAD"
        first = False
        recs.append((ts, typ, b))
recs.sort(key=lambda r: r[0])
for ts, typ, b in recs:
    if typ == 9:
        rss, vm = struct.unpack_from('<QQ', b)
        print("rss", ts, rss, vm)
    elif typ == 7:
        print("mark", b[8:].split(b'\0')[0].decode())
PYEOF
rss() { "$PY" "$TRASH/rss.py" "$TOP/tests/helper" "$@"; }

# touch: 8 steps, each writes 8 MiB more of one 64 MiB malloc block and
# marks "stepN". tick: N allocations 20 ms apart (CLOCK_MONOTONIC).
cat >"$TRASH/touch.c" <<'CEOF'
#include <stdlib.h>
#include <string.h>
void memprov_mark(const char *) __attribute__((weak));
int main(void)
{
	char *p = malloc(64 << 20), label[8] = "step0";
	for (int i = 0; i < 8; i++) {
		memset(p + ((size_t)i << 23), 1, 8 << 20);
		label[4] = (char)('1' + i);
		if (memprov_mark) memprov_mark(label);
	}
	free(p);
	return 0;
}
CEOF
cat >"$TRASH/tick.c" <<'CEOF'
#include <stdlib.h>
#include <time.h>
int main(int argc, char **argv)
{
	struct timespec t;
	int n = argc > 1 ? atoi(argv[1]) : 4;
	clock_gettime(CLOCK_MONOTONIC, &t);
	for (int i = 0; i < n; i++) {
		t.tv_nsec += 20000000;
		if (t.tv_nsec >= 1000000000) { t.tv_sec++; t.tv_nsec -= 1000000000; }
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL));
		free(malloc(100));
	}
	return 0;
}
CEOF

test_expect_success 'build the RSS test programs' '
	cc -O0 -o touch touch.c && cc -O0 -o tick tick.c
'

test_expect_success 'RSS at each mark rises by the 8 MiB the step touched' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=t.trace ./touch 2>err &&
	test ! -s err &&
	rss t.trace >out && cat out &&
	grep -x "interval 250000000" out &&
	awk "/^mark/ { m = 1; next }
	     /^rss/ && m { if (prev) { d = \$3 - prev; print \"delta\", d;
	                   if (d < 8257536 || d > 8912896) bad = 1; n++ }
	                   prev = \$3; m = 0 }
	     END { print n, \"deltas\"; exit bad || n != 7 }" out
'

test_expect_success 'a sample at trace open and one at exit' '
	rss t.trace >out &&
	sed -n 2p out | grep "^rss " &&
	tail -n 1 out | grep "^rss "
'

test_expect_success 'MEMPROV_RSS_INTERVAL_MS=0 writes no RSS record' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_RSS_INTERVAL_MS=0 MEMPROV_OUTPUT=z.trace ./touch &&
	rss z.trace >out &&
	grep -x "interval 0" out &&
	test $(grep -c "^rss" out) = 0 && test $(grep -c "^mark" out) = 8
'

# 5 allocations 20 ms apart, interval 5 ms: each one is past the next
# sample time, so each takes a sample; samples the interval made are at
# least 5 ms apart. With a 60 s interval only open and exit sample.
test_expect_success 'records past the interval take samples, an interval apart' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_RSS_INTERVAL_MS=5 MEMPROV_OUTPUT=k.trace ./tick 5 &&
	rss k.trace | grep "^rss" >out && cat out &&
	test $(wc -l <out) -ge 7 &&
	sed "1d;\$d" out | awk "NR > 1 && \$2 - prev < 5000000 { bad = 1 }
		{ prev = \$2 } END { exit bad }" &&
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_RSS_INTERVAL_MS=60000 MEMPROV_OUTPUT=l.trace ./tick 5 &&
	test $(rss l.trace | grep -c "^rss") = 2
'

test_expect_success 'a forked child samples its own RSS' '
	cat >fk.c <<-EOF &&
	#include <stdlib.h>
	#include <string.h>
	#include <sys/wait.h>
	#include <unistd.h>
	void memprov_mark(const char *) __attribute__((weak));
	int main(void)
	{
		if (fork() == 0) {
			char *p = malloc(32 << 20);
			memset(p, 1, 32 << 20);
			memprov_mark("child");
			_exit(0);
		}
		wait(NULL);
		memprov_mark("parent");
		return 0;
	}
	EOF
	cc -O0 -o fk fk.c &&
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=f.%p.trace ./fk &&
	for f in f.*.trace; do rss $f >$f.out; done &&
	c=$(grep -l "^mark child" f.*.out) && p=$(grep -l "^mark parent" f.*.out) &&
	test "$c" != "$p" &&
	crss=$(grep -A1 "^mark child" $c | sed -n "s/^rss [0-9]* \([0-9]*\) .*/\1/p") &&
	prss=$(grep -A1 "^mark parent" $p | sed -n "s/^rss [0-9]* \([0-9]*\) .*/\1/p") &&
	echo "child $crss parent $prss" &&
	test $((crss - prss)) -gt 30000000
'

# dlopen of a bare name that lives only in $ORIGIN/sub: from an executable
# with DT_RUNPATH, one with DT_RPATH, and a library with DT_RPATH (the
# executable has none); the same output with and without the preload.
cat >"$TRASH/plug.c" <<'CEOF'
int plug_value(void) { return 42; }
CEOF
cat >"$TRASH/opener.c" <<'CEOF'
#include <dlfcn.h>
#include <stdio.h>
int open_plug(const char *name)
{
	void *h = dlopen(name, RTLD_NOW);
	int (*f)(void);
	if (!h) { printf("fail %s\n", dlerror()); return 1; }
	f = (int (*)(void))dlsym(h, "plug_value");
	printf("plug %d\n", f ? f() : -1);
	return 0;
}
CEOF
cat >"$TRASH/dlmain.c" <<'CEOF'
#include <stdio.h>
int open_plug(const char *name);
int main(int argc, char **argv)
{
	return open_plug(argc > 1 ? argv[1] : "libplug.so");
}
CEOF

test_expect_success 'build the dlopen test objects' '
	mkdir -p sub lib/sub &&
	cc -shared -fPIC -o sub/libplug.so plug.c &&
	cp sub/libplug.so lib/sub/ &&
	cc -o runpath dlmain.c opener.c -ldl -Wl,--enable-new-dtags,-rpath,"\$ORIGIN/sub" &&
	cc -o rpath dlmain.c opener.c -ldl -Wl,--disable-new-dtags,-rpath,"\$ORIGIN/sub" &&
	cc -shared -fPIC -o lib/libopener.so opener.c -ldl \
		-Wl,--disable-new-dtags,-rpath,"\$ORIGIN/sub" &&
	cc -o libcaller dlmain.c -Llib -lopener -Wl,--enable-new-dtags,-rpath,"\$ORIGIN/lib" &&
	readelf -d runpath | grep -q "RUNPATH.*ORIGIN/sub" &&
	readelf -d rpath | grep -q "RPATH.*ORIGIN/sub" &&
	readelf -d lib/libopener.so | grep -q "RPATH.*ORIGIN/sub" &&
	! readelf -d libcaller | grep -q "ORIGIN/sub"
'

for prog in runpath rpath libcaller; do
	test_expect_success "dlopen(\"libplug.so\") from $prog under the preload" "
		./$prog >bare.out && echo 'plug 42' >expect && test_cmp expect bare.out &&
		LD_PRELOAD=\$MEMPROV_LIB MEMPROV_OUTPUT=$prog.trace ./$prog >mp.out 2>err &&
		test_cmp expect mp.out && test ! -s err &&
		memprov dump $prog.trace | grep -c 'sub/libplug.so' >n && echo 1 >one && test_cmp one n
	"
done

test_expect_success 'a name found nowhere fails with the loader'"'"'s own message' '
	{ ./runpath libnothere.so >bare.out || test $? = 1; } &&
	{ LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=n.trace ./runpath libnothere.so >mp.out ||
		test $? = 1; } &&
	cat mp.out && grep -x "fail libnothere.so: cannot open shared object file: No such file or directory" mp.out &&
	test_cmp bare.out mp.out
'

# Sampling: 100,000 blocks of 100 B (10,000,000 B), ten of 1 MiB, then
# 1010 frees. With MEMPROV_SAMPLE_BYTES=10000 each 100 B block is recorded
# with probability 1 - exp(-0.01): about 995 of them, each standing for
# 100 / (1 - exp(-0.01)) = 10050 B; the 1 MiB blocks always, unflagged.
cat >"$TRASH/samp.c" <<'CEOF'
#include <stdlib.h>
static void *keep[100000];
int main(void)
{
	for (int i = 0; i < 100000; i++) keep[i] = malloc(100);
	for (int i = 0; i < 10; i++) { free(keep[i * 7]); keep[i * 7] = malloc(1 << 20); }
	for (int i = 0; i < 1000; i++) { free(keep[50000 + i]); keep[50000 + i] = 0; }
	return 0;
}
CEOF
cat >"$TRASH/samp.py" <<'PYEOF'
import math, struct, sys
sys.path.insert(0, sys.argv.pop(1))
import mptrace
t = mptrace.Trace(sys.argv[1])
n = t.hdr["sample_bytes"]
print("sample_bytes", n)
big = small = frees = plain_small = 0
est = 0.0
for ts, typ, fl, fn, kind, b, ser in t.records():
    if typ == 1:
        a, s = struct.unpack_from('<QQ', b)
        if s == 1 << 20 and not fl & 8:
            big += 1
        elif s == 100 and fl & 8:
            small += 1
            est += s / (1 - math.exp(-s / n)) if n else s
        elif s == 100:
            plain_small += 1
    elif typ == 2:
        frees += 1
print("big", big, "frees", frees, "unflagged-100", plain_small)
print("sampled-100", small, "estimate-ok", int(abs(est - 1e7) < 1.5e6))
PYEOF

test_expect_success 'build the sampling program' 'cc -O0 -o samp samp.c'

test_expect_success 'MEMPROV_SAMPLE_BYTES=10000: big blocks always, small ones weighted' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_SAMPLE_BYTES=10000 MEMPROV_OUTPUT=s.trace ./samp 2>err &&
	test ! -s err &&
	"$PY" samp.py "$TOP/tests/helper" s.trace >out && cat out &&
	grep -x "sample_bytes 10000" out &&
	grep -x "big 10 frees 1010 unflagged-100 0" out &&
	grep "^sampled-100 [0-9]* estimate-ok 1$" out &&
	k=$(sed -n "s/^sampled-100 \([0-9]*\) .*/\1/p" out) &&
	test $k -gt 800 && test $k -lt 1200
'

test_expect_success 'without MEMPROV_SAMPLE_BYTES every block is recorded, unflagged' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=a.trace ./samp &&
	"$PY" samp.py "$TOP/tests/helper" a.trace >out && cat out &&
	grep -x "sample_bytes 0" out &&
	grep -x "big 10 frees 1010 unflagged-100 100000" out &&
	grep -x "sampled-100 0 estimate-ok 0" out
'

test_expect_success 'module paths are the files the kernel mapped, links resolved (read from /proc/self/map_files)' '
	# libbz2 (dpkg needs it), which python3 does not load: by a relative
	# name through a link, recorded as the file the link leads to
	lib=/usr/lib/x86_64-linux-gnu/libbz2.so.1 && real=$(readlink -f $lib) && test "$real" != $lib &&
	mkdir -p alias && ln -sf $lib alias/libalias.so &&
	# a file whose own name ends in " (deleted)", as the kernel marks a
	# deleted one: its name kept whole
	cp /usr/lib/x86_64-linux-gnu/libuuid.so.1 "alias/libuuidcopy (deleted)" &&
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/paths.trace" /usr/bin/python3 -c \
		"import ctypes; ctypes.CDLL(\"./alias/libalias.so\"); ctypes.CDLL(\"./alias/libuuidcopy (deleted)\"); print(open(\"/proc/self/maps\").read())" >maps.txt &&
	"$MEMPROV_CLI" dump paths.trace | sed -n "s/.* module .* path=\"\(.*\)\"$/\1/p" | sort -u >paths.txt &&
	grep -qx "$real" paths.txt && grep -qx "$TRASH/alias/libuuidcopy (deleted)" paths.txt &&
	test "$(grep -c alias paths.txt)" = 1 &&
	test "$(grep -c . paths.txt)" -ge 8 &&
	while read -r p; do
		test "$p" = linux-vdso.so.1 || grep -q " $p\$" maps.txt || { echo "not mapped: $p"; exit 1; }
	done <paths.txt
'

test_done
