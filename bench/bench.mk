# bench/bench.mk - `make bench`: the benchmark programs and the bench run.
# Included by the main Makefile. The programs are built with fixed flags
# (not $(CFLAGS)) so that figures compare across builds; they are not part
# of TEST_BUILD: `make test` neither builds nor times them.

BENCH_PROGS := bench/bin/churn bench/bin/bigarray bench/bin/measure
BENCH_CFLAGS := -std=gnu11 $(WARN) -O2 -g -fno-omit-frame-pointer \
	-fno-optimize-sibling-calls -D_GNU_SOURCE

bench/bin/%: bench/%.c
	@mkdir -p bench/bin
	$(call quiet,CC,$@)$(CC) $(BENCH_CFLAGS) -o $@ $< -lpthread

.PHONY: bench-progs bench-clean

bench-progs: $(BENCH_PROGS)

bench: all $(BENCH_PROGS) ## run the benchmarks, write bench/RESULTS.md (BENCH_RUNS=5, BENCH_QUICK=1)
	$(Q)bench/run.sh

bench-clean:
	rm -rf bench/bin bench/out

clean: bench-clean
