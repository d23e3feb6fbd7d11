# tests/progs.mk - builds the test programs tests/progs/*.c into tests/bin/,
# unoptimized and with debug info so that reports name exact lines.
PROGS := $(patsubst tests/progs/%.c,tests/bin/%,$(wildcard tests/progs/*.c))
TEST_BUILD += $(PROGS)

$(PROGS): tests/bin/%: tests/progs/%.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $< -lpthread

# goexit.c without Go's note: a C program that exits by a raw system call
tests/bin/rawexit: tests/progs/goexit.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -DNO_GO_NOTE -o $@ $<
TEST_BUILD += tests/bin/rawexit

# split/: two units, the second linked without its .debug_aranges (as a
# cgo program's Go code, which Go gives none): its lines must still be its own
tests/bin/split: tests/progs/split/main.c tests/progs/split/part.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -c -o $@.main.o tests/progs/split/main.c && \
	$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -c -o $@.part.o tests/progs/split/part.c && \
	objcopy --remove-section .debug_aranges $@.part.o && \
	$(CC) -o $@ $@.main.o $@.part.o && rm -f $@.main.o $@.part.o
TEST_BUILD += tests/bin/split
