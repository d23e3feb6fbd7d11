#!/bin/sh
# t1060-sampling.sh - traces recorded with MEMPROV_SAMPLE_BYTES: a sampled
# block of size s < n stands for 1/(1 - exp(-s/n)) blocks (rounded), in
# live figures, peaks and sites; its free takes the same weight back.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

# n = 1000: s = 100 weighs 1/(1-e^-0.1) = 10.51 -> 11 blocks, 1100 B;
# s = 600 weighs 1/(1-e^-0.6) = 2.22 -> 2 blocks, 1200 B; s = 5000 >= n
# is recorded whole (weight 1).
test_expect_success 'sampled blocks are weighted, whole ones are not' '
	gen s <<-EOF &&
	header state=exited sample=1000
	thread 1
	stack ts=5 id=7 native=0x1
	alloc ts=10 addr=0x100 size=100 stack=7 flags=sampled
	alloc ts=20 addr=0x200 size=600 stack=7 flags=sampled
	alloc ts=30 addr=0x300 size=5000 stack=7
	free ts=40 addr=0x999
	EOF
	memprov stats --json s.trace >s.json &&
	jget s.json kinds.heap.live_blocks kinds.heap.live_bytes kinds.heap.allocs \
		kinds.heap.peak_bytes unmatched_frees >out &&
	printf "14\n7300\n14\n7300\n1\n" >expect &&
	test_cmp expect out &&
	memprov leaks --json s.trace >l.json &&
	jget l.json totals.heap.blocks totals.heap.bytes sites.0.blocks sites.0.bytes >out &&
	printf "14\n7300\n14\n7300\n" >expect &&
	test_cmp expect out
'

test_expect_success 'the free of a sampled block takes its weight back' '
	gen f <<-EOF &&
	header state=exited sample=1000
	thread 1
	alloc ts=10 addr=0x100 size=100 flags=sampled
	alloc ts=20 addr=0x200 size=600 flags=sampled
	free ts=30 addr=0x100
	EOF
	memprov stats --json f.trace >s.json &&
	jget s.json kinds.heap.live_blocks kinds.heap.live_bytes kinds.heap.peak_bytes >out &&
	printf "2\n1200\n2300\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a sampled run of a real program estimates its live bytes' '
	cat >samp.c <<-\CEOF &&
	#include <stdlib.h>
	static void *keep[100000];
	int main(void)
	{
		for (int i = 0; i < 100000; i++)
			keep[i] = malloc(100);
		for (int i = 0; i < 50000; i++)
			free(keep[i]);
		return 0;
	}
	CEOF
	cc -O0 -o samp samp.c &&
	MEMPROV_SAMPLE_BYTES=4096 memprov run -o samp.trace -- ./samp &&
	memprov leaks --json samp.trace >l.json &&
	jget l.json totals.heap.bytes >bytes &&
	# 5,000,000 B live; about 1,220 samples survive, so the estimate is
	# within a few percent; 15% cannot be met by unweighted figures (1.2%).
	awk "{ exit !(\$1 > 4250000 && \$1 < 5750000) }" bytes
'

test_done
