# bench/bench.mk - `make bench`: the benchmark programs and the bench run.
# Included by the main Makefile. The programs are built with fixed flags
# (not $(CFLAGS)) so that figures compare across builds; they are not part
# of TEST_BUILD: `make test` neither builds nor times them.

BENCH_PROGS := bench/bin/churn bench/bin/bigarray bench/bin/measure bench/bin/spawn
BENCH_CFLAGS := -std=gnu11 $(WARN) -O2 -g -fno-omit-frame-pointer \
	-fno-optimize-sibling-calls -D_GNU_SOURCE
# LeakSanitizer's column: the same programs, clang -fsanitize=leak
# (libclang-rt-14-dev); its fast unwinder walks their frame pointers.
BENCH_LSAN_CC ?= clang-14
BENCH_LSAN_PROGS := bench/bin/churn-lsan bench/bin/bigarray-lsan

bench/bin/%: bench/%.c
	@mkdir -p bench/bin
	$(call quiet,CC,$@)$(CC) $(BENCH_CFLAGS) -o $@ $< -lpthread

bench/bin/%-lsan: bench/%.c | bench-deps
	@mkdir -p bench/bin
	$(call quiet,CC,$@)$(BENCH_LSAN_CC) $(BENCH_CFLAGS) -fsanitize=leak -o $@ $< -lpthread

.PHONY: bench-progs bench-clean bench-deps

# heaptrack, perf, clang and its sanitizer runtimes, sqlite3: when absent.
bench-deps: ## install what make bench needs (heaptrack, perf, clang, sqlite3) when absent
	$(Q)scripts/install-deps.sh bench

bench-progs: $(BENCH_PROGS) ## build the benchmark programs (bench/bin/), for bench/profile.sh

bench: all $(BENCH_PROGS) bench-deps ## run the benchmarks, write bench/RESULTS.md and RESULTS-many.md (BENCH_RUNS=5, BENCH_QUICK=1, BENCH_TASKS=255)
	$(Q)$(MAKE) --no-print-directory $(BENCH_LSAN_PROGS) || \
		echo "bench: no LeakSanitizer builds ($(BENCH_LSAN_CC) -fsanitize=leak failed): its column reads n/a"
	$(Q)bench/run.sh
	$(Q)bench/many.sh

bench-clean: ## remove the benchmark programs and outputs (bench/bin, bench/out)
	rm -rf bench/bin bench/out

clean: bench-clean
