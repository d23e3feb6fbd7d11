# tests/progs.mk - builds the test programs tests/progs/*.c into tests/bin/,
# unoptimized and with debug info so that reports name exact lines.
PROGS := $(patsubst tests/progs/%.c,tests/bin/%,$(wildcard tests/progs/*.c))
TEST_BUILD += $(PROGS)

$(PROGS): tests/bin/%: tests/progs/%.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $< -lpthread
