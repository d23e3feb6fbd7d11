#!/bin/sh
# t1095-install.sh - install anywhere: scripts/install-deps.sh finds what
# is missing by compiling (no package database), and says what to install
# on a machine without apt-get; in a copy of the tree, with a PATH that
# has no apt-get, apt, dpkg-query or dpkg, plain `make` builds and
# `make deb` makes a package; `dpkg --root` installs it into a scratch
# root, whose memprov traces /bin/true with its own library; `make
# install` and `make uninstall` put and take exactly the listed files.
. "$(dirname "$0")/test-lib.sh"

command -v git >/dev/null && git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1 ||
	test_skip "not a git checkout (the tree is copied from git ls-files)"
[ "$(uname -m)" = x86_64 ] || test_skip "the preload object is x86-64 only"

# A PATH like a container without Debian's package tools: every command
# of /usr/bin and /bin but apt-get, apt, apt-cache, dpkg-query and dpkg.
NOAPT=$TRASH/bin-noapt
mkdir "$NOAPT"
for d in /usr/local/bin /usr/bin /bin /usr/sbin /sbin; do
	for f in "$d"/*; do
		n=${f##*/}
		case $n in apt|apt-get|apt-cache|dpkg-query|dpkg) continue ;; esac
		[ -e "$NOAPT/$n" ] || ln -s "$f" "$NOAPT/$n"
	done
done
export NOAPT

test_expect_success 'install-deps.sh --check: nothing missing, without apt-get or dpkg-query' '
	! PATH=$NOAPT command -v dpkg-query && ! PATH=$NOAPT command -v apt-get &&
	PATH=$NOAPT sh "$TOP/scripts/install-deps.sh" --check build >out 2>&1 &&
	test ! -s out
'

test_expect_success 'a library missing: named, with its Debian package; no apt-get: said so' '
	cat >nounwind-cc <<-\EOF &&
	#!/bin/sh
	# a compiler that cannot find libunwind.h
	for a; do case $a in *.c) grep -q libunwind.h "$a" && { echo "libunwind.h: No such file" >&2; exit 1; } ;; esac; done
	exec cc "$@"
	EOF
	chmod +x nounwind-cc &&
	st=0 && PATH=$NOAPT CC=$TRASH/nounwind-cc sh "$TOP/scripts/install-deps.sh" --check build 2>err || st=$? &&
	test $st = 1 &&
	cat >want <<-\EOF &&
	memprov: missing for '"'"'scripts/install-deps.sh build'"'"':
	  libunwind (libunwind.h, -lunwind) (Debian package libunwind-dev)
	this machine has no apt-get: install the same with its package manager
	EOF
	test_cmp want err &&
	st=0 && PATH=$NOAPT sh "$TOP/scripts/install-deps.sh" test 2>err || st=$? &&
	if [ $st != 0 ]; then grep -F "this machine has no apt-get" err; fi
'

test_expect_success 'a copy of the tree builds with plain make, without apt-get or dpkg-query' '
	mkdir src &&
	(cd "$TOP" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar cf -) | (cd src && tar xf -) &&
	test -f src/Makefile && test ! -e src/.build-deps-ok &&
	PATH=$NOAPT timeout 600 make -C src -j2 CFLAGS="-O1 -g" >build.log 2>&1 &&
	test -x src/analyzer/memprov && test -f src/interpose/libmemprov.so &&
	! grep -Ei "dpkg|apt-get|Error 127" build.log
'

test_expect_success 'make deb: a package with the programs, man page, completion, schemas' '
	PATH=$NOAPT make -C src deb >deb.log 2>&1 &&
	deb=$(ls src/memprov_*_amd64.deb) &&
	grep -F "memprov: wrote memprov_$(cat "$TOP/VERSION")_amd64.deb" deb.log &&
	dpkg-deb --field "$deb" Package Architecture Depends >fields &&
	grep -Fx "Package: memprov" fields && grep -Fx "Architecture: amd64" fields &&
	grep "^Depends: .*libunwind8" fields && grep "^Depends: .*libdw1" fields &&
	dpkg-deb --contents "$deb" | awk "{print \$6}" | grep -v "/$" | sort >contents &&
	for f in ./usr/bin/memprov ./usr/lib/libmemprov.so ./usr/include/memprov.h \
		./usr/include/memprov_trace.h ./usr/include/memprov_codec.h ./usr/share/man/man1/memprov.1.gz \
		./usr/share/bash-completion/completions/memprov ./usr/share/memprov/schemas/leaks.schema.json; do
		grep -Fx "$f" contents || { echo "missing $f"; exit 1; }
	done
'

test_expect_success 'dpkg -i (into a scratch root) installs it; its memprov runs /bin/true traced' '
	root=$TRASH/root &&
	mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" &&
	: >"$root/var/lib/dpkg/status" &&
	dpkg --root="$root" --force-depends --force-not-root --force-script-chrootless \
		-i src/memprov_*_amd64.deb >dpkg.log 2>&1 &&
	grep -A1 "^Package: memprov$" "$root/var/lib/dpkg/status" | grep -F "Status: install ok installed" &&
	(cd "$TRASH" && env -u MEMPROV_LIB "$root/usr/bin/memprov" run -o installed.trace -- /bin/true) 2>err &&
	grep -Fx "memprov: trace written to installed.trace" err &&
	"$root/usr/bin/memprov" stats --json installed.trace >s.json &&
	grep -F "\"schema\":\"memprov.stats/1\"" s.json &&
	"$root/usr/bin/memprov" --version | grep -Fx "memprov $(cat "$TOP/VERSION")" &&
	dpkg --root="$root" --force-not-root --force-script-chrootless -r memprov >>dpkg.log 2>&1 &&
	test ! -e "$root/usr/bin/memprov"
'

test_expect_success 'make install and make uninstall: exactly the listed files' '
	make -C src install DESTDIR=$TRASH/inst PREFIX=/opt/mp >inst.log 2>&1 &&
	(cd inst && find . -type f | sort) >files &&
	cat >want <<-\EOF &&
	./opt/mp/bin/memprov
	./opt/mp/include/memprov.h
	./opt/mp/include/memprov_codec.h
	./opt/mp/include/memprov_trace.h
	./opt/mp/lib/libmemprov.so
	./opt/mp/share/bash-completion/completions/memprov
	./opt/mp/share/man/man1/memprov.1
	./opt/mp/share/memprov/python/memprov_pytest.py
	./opt/mp/share/memprov/schemas/check.schema.json
	./opt/mp/share/memprov/schemas/diff.schema.json
	./opt/mp/share/memprov/schemas/growth.schema.json
	./opt/mp/share/memprov/schemas/leaks.schema.json
	./opt/mp/share/memprov/schemas/merge.schema.json
	./opt/mp/share/memprov/schemas/peak.schema.json
	./opt/mp/share/memprov/schemas/stats.schema.json
	./opt/mp/share/memprov/schemas/timeline.schema.json
	EOF
	test_cmp want files &&
	make -C src uninstall DESTDIR=$TRASH/inst PREFIX=/opt/mp >uninst.log 2>&1 &&
	(cd inst && find . -type f) >left && test ! -s left
'

test_done
