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

# split/: units linked without their .debug_aranges (as a cgo program's Go
# code, which Go gives none), between two that have them and after them:
# their lines must still be their own
SPLIT := main part tail last
tests/bin/split: $(SPLIT:%=tests/progs/split/%.c)
	@mkdir -p tests/bin
	$(call quiet,CC,$@)set -e; for u in $(SPLIT); do \
		$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -c -o $@.$$u.o tests/progs/split/$$u.c; \
	done; \
	objcopy --remove-section .debug_aranges $@.part.o; \
	objcopy --remove-section .debug_aranges $@.last.o; \
	$(CC) -o $@ $(SPLIT:%=$@.%.o); rm -f $(SPLIT:%=$@.%.o)
TEST_BUILD += tests/bin/split
