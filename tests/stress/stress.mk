# tests/stress/stress.mk - stress programs for libmemprov.so (tests/t91*.sh):
# unoptimized with debug info, so reports name stress.c for their sites;
# a ThreadSanitizer build of the same program (tests/t9120-tsan.sh).
tests/bin/stress: tests/stress/stress.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $< -lpthread

TEST_BUILD += tests/bin/stress
