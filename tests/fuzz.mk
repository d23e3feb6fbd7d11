# tests/fuzz.mk - libFuzzer targets (fuzz/*.c) over the analyzer, built
# with clang, ASan and UBSan into fuzz/build/ (not part of `make test`).
#
#   make fuzz                     each target for FUZZ_SECONDS (default 60)
#   make fuzz FUZZ_SECONDS=600    longer
#   make fuzz-build               build only
#
# Inputs that crash land in fuzz/crashes/; new coverage is kept in
# fuzz/build/corpus-* (the checked-in seeds in fuzz/corpus/ stay as they
# are). A crash fails the run; keep the input as a regression test
# (tests/data/fuzz/, replayed by tests/t9000-fuzz-regress.sh).
FUZZ_CC ?= clang-14
FUZZ_SECONDS ?= 60
FUZZ_JOBS ?= 1
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -Iinclude -Ianalyzer \
	-fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_AN_SRC := $(wildcard analyzer/*.c)
FUZZ_AN_OBJ := $(patsubst analyzer/%.c,fuzz/build/an/%.o,$(FUZZ_AN_SRC))
FUZZ_TARGETS := fuzz/build/fuzz_trace fuzz/build/fuzz_options fuzz/build/fuzz_summary

.PHONY: fuzz-build fuzz-deps

# clang-14 and its libFuzzer runtime, installed when absent.
fuzz-deps: ## install clang-14 and its libFuzzer runtime when absent
	$(Q)scripts/install-deps.sh fuzz

$(FUZZ_AN_OBJ) $(FUZZ_TARGETS): | fuzz-deps

fuzz/build/an/main.o: analyzer/main.c
	@mkdir -p fuzz/build/an
	$(call quiet,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link \
		-Dmain=memprov_main -c -o $@ $<

fuzz/build/an/%.o: analyzer/%.c $(wildcard analyzer/*.h) include/memprov_trace.h
	@mkdir -p fuzz/build/an
	$(call quiet,FUZZCC,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

fuzz/build/fuzz_trace: fuzz/fuzz_trace.c $(FUZZ_AN_OBJ)
	$(call quiet,FUZZLD,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer \
		-Wl,--wrap=sym_new -o $@ $< $(FUZZ_AN_OBJ) $(CLI_LIBS) -ldl

fuzz/build/fuzz_options: fuzz/fuzz_options.c $(FUZZ_AN_OBJ)
	$(call quiet,FUZZLD,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer \
		-o $@ $< $(FUZZ_AN_OBJ) $(CLI_LIBS) -ldl

fuzz/build/fuzz_summary: fuzz/fuzz_summary.c $(FUZZ_AN_OBJ)
	$(call quiet,FUZZLD,$@)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer \
		-o $@ $< $(FUZZ_AN_OBJ) $(CLI_LIBS) -ldl

fuzz-build: $(FUZZ_TARGETS) ## build the libFuzzer targets (clang, ASan, UBSan)

fuzz: fuzz-build ## run each fuzzer FUZZ_SECONDS (default 60); crashes in fuzz/crashes/
	$(Q)mkdir -p fuzz/crashes fuzz/build/corpus-trace fuzz/build/corpus-options fuzz/build/corpus-summary
	$(Q)for t in trace options summary; do \
		echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
		fuzz/build/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=3 \
			-max_len=262144 -rss_limit_mb=4096 -timeout=20 \
			-artifact_prefix=fuzz/crashes/fuzz_$$t- -print_final_stats=1 \
			fuzz/build/corpus-$$t fuzz/corpus/$$t 2>fuzz/build/fuzz_$$t.log; \
		rc=$$?; tail -n 14 fuzz/build/fuzz_$$t.log; \
		[ $$rc = 0 ] || { echo "fuzz_$$t failed ($$rc): see fuzz/build/fuzz_$$t.log, fuzz/crashes/"; exit 1; }; \
	done
