# tests/helper/helper.mk - the analyzer's test helpers: tracegen writes a
# memprov trace from a text description (tests/t1*.sh).
tests/bin/tracegen: tests/helper/tracegen.c include/memprov_trace.h
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(BASE_CFLAGS) -o $@ tests/helper/tracegen.c

TEST_BUILD += tests/bin/tracegen

# A -g program with known allocation lines for the symbolization test.
tests/bin/symprog: tests/helper/symprog.c
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -fno-omit-frame-pointer -o $@ tests/helper/symprog.c

TEST_BUILD += tests/bin/symprog

# analyzer/range_index.c against a linear scan (t9540).
tests/bin/test-range-index: tests/helper/test-range-index.c analyzer/range_index.o analyzer/util.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(CLI_CFLAGS) -Ianalyzer $(CLI_LDFLAGS) -o $@ $^ -lm

TEST_BUILD += tests/bin/test-range-index

# interpose/ internals, each linked alone with the files below it (t1080):
# the unwinder (unwind, cfi, gate, sys) against libunwind; its memo's test
# of an entry (unwind_memo.h) on stacks it builds; the CFI and
# LEB128 readers on crafted input; the stack-id set under threads; the
# sampling arithmetic; the trace read back from inside (trace_iter); the
# scan's sorts (reach_mem).
tests/bin/test-unwind: tests/helper/test-unwind.c interpose/unwind.o interpose/cfi.o \
		interpose/gate.o interpose/sys.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g $(BASE_CFLAGS) -Wno-missing-prototypes -o $@ $^ \
		-lunwind -lpthread

tests/bin/test-memo: tests/helper/test-memo.c interpose/unwind_memo.h
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g $(BASE_CFLAGS) -o $@ $<

tests/bin/test-cfi: tests/helper/test-cfi.c interpose/cfi.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g $(BASE_CFLAGS) -o $@ $^

tests/bin/test-seccomp: tests/helper/test-seccomp.c interpose/seccomp_eval.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g $(BASE_CFLAGS) -o $@ $^

tests/bin/test-intern: tests/helper/test-intern.c interpose/intern.o interpose/sys.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g $(BASE_CFLAGS) -o $@ $^ -lpthread

tests/bin/test-sample: tests/helper/test-sample.c interpose/sample.o interpose/sys.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g $(BASE_CFLAGS) -o $@ $^ -lm

tests/bin/test-iter: tests/helper/test-iter.c interpose/trace_iter.o interpose/sys.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g $(BASE_CFLAGS) -o $@ $^

tests/bin/test-sort: tests/helper/test-sort.c interpose/reach_mem.o interpose/sys.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g $(BASE_CFLAGS) -o $@ $^

TEST_BUILD += tests/bin/test-unwind tests/bin/test-cfi tests/bin/test-intern tests/bin/test-sample
TEST_BUILD += tests/bin/test-iter tests/bin/test-seccomp tests/bin/test-sort tests/bin/test-memo

# analyzer/sym_spans.c against libdwfl's own answers (t1050).
tests/bin/test-sym-spans: tests/helper/test-sym-spans.c analyzer/sym_spans.o analyzer/util.o
	$(Q)mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(CLI_CFLAGS) -Ianalyzer $(CLI_LDFLAGS) -o $@ $^ -ldw -lelf -lm

TEST_BUILD += tests/bin/test-sym-spans
