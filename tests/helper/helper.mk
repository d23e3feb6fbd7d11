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
