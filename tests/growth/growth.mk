# tests/growth/growth.mk - test programs for the growth, peak, timeline,
# diff and html reports (tests/t5*.sh), built -g -O0 so sites name lines.
GROWTH_PROGS := $(patsubst tests/growth/%.c,tests/bin/%,$(wildcard tests/growth/*.c))
TEST_BUILD += $(GROWTH_PROGS)

$(GROWTH_PROGS): tests/bin/%: tests/growth/%.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $<
