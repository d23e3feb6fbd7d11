#!/bin/sh
# check-realign.sh - every function of libmemprov.so that stores to or
# loads from its stack frame with an aligned vector instruction (movaps,
# movdqa, movapd) must align the stack itself (MP_REALIGN, interpose/sys.h):
# a program may call a hook with its stack 8 bytes off the ABI's 16-byte
# alignment, and such an instruction would then fault inside memprov.
#
#   scripts/check-realign.sh [LIB]     (default interpose/libmemprov-syms.so)
#
# LIB needs its symbol table (libmemprov.so is stripped): the functions
# are told apart by it. Prints each function that breaks the rule; exits
# 1 if one does, 2 when objdump fails or LIB has no symbols, 0 otherwise.
lib=${1:-interpose/libmemprov-syms.so}
if ! nm "$lib" 2>/dev/null | grep -q " [tT] "; then
	echo "check-realign: $lib has no symbol table (use interpose/libmemprov-syms.so)" >&2
	exit 2
fi
out=$(objdump -d --no-show-raw-insn "$lib") || exit 2
printf '%s\n' "$out" | awk '
/>:$/ { fn = $2; next }
/(movaps|movdqa|movapd)[ \t].*\(%r[bs]p\)/ { aligned[fn] = 1 }
/and[ \t]+\$0xfffffffffffffff0,%rsp/ { realigns[fn] = 1 }
END {
	bad = 0
	for (f in aligned)
		if (!(f in realigns)) {
			printf "check-realign: %s uses aligned vector access to its stack but does not align it (MP_REALIGN)\n", f
			bad++
		}
	if (bad) exit 1
	print "check-realign: ok"
}'
