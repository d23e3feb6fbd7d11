#!/bin/sh
# text-order.sh LIST CC [FLAGS...] - prints the linker script that links
# libmemprov.so: the linker's own default for CC and FLAGS (what `CC
# FLAGS -shared` would use), with the functions LIST names placed first
# in .text, in LIST's order (interpose/hot.txt, written by
# scripts/hot-text.sh, says why). LIST: a function's name a line, a line
# that starts with * copied as an input-section pattern, # a comment.
# Where the default script has no .text statement to put them in, it is
# printed as it is, with a warning; where the linker prints none (lld,
# gold), nothing is, and the Makefile links with the linker's default:
# the library is the same either way, only its resident size grows.
# .fini moves before .text (see below).
set -eu
list=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$@" -shared -nostdlib -Wl,--verbose -o "$tmp/empty.so" -x c /dev/null >"$tmp/verbose" 2>"$tmp/err" ||
	{ cat "$tmp/err" >&2; echo "text-order: $* -Wl,--verbose failed" >&2; exit 1; }
awk -v list="$list" '
	/^=====/ { inside = !inside; next }
	inside { line[++n] = $0 }
	END {
		# .fini (run at exit) moves before .text, beside .init: at the end of
		# the text it was a page of the cold functions every process touched
		for (i = 1; i <= n; i++)
			if (line[i] ~ /^ *\.fini[ \t]*:/)
				for (f0 = i; i <= n && line[i] !~ /^ *}/; i++)
					f1 = i + 1
		for (i = 1; i <= n; i++) {
			if (f0 && i >= f0 && i <= f1)
				continue
			if (line[i] ~ /^ *\.text[ \t]*:/) {
				for (k = f0; f0 && k <= f1; k++)
					print line[k]
				text = 1
			}
			print line[i]
			if (text && line[i] ~ /^ *\{/) {
				while ((getline w <list) > 0) {
					if (w ~ /^#/ || w ~ /^[ \t]*$/)
						continue
					if (w ~ /^\*/)
						print "    " w
					else
						printf "    *(.text.%s .text.%s.* .text.startup.%s .text.exit.%s)\n", w, w, w, w
				}
				text = 0
				done = 1
			}
		}
		if (n && !done)
			print "text-order: no .text statement in the default linker script: the text is not ordered" >"/dev/stderr"
	}
' "$tmp/verbose"
