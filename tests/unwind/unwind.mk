# tests/unwind/unwind.mk - programs for tests/t2020-unwind.sh (unwind.c
# against libunwind): C++ exceptions, signal handlers, setjmp/longjmp,
# threads, optimized code without frame pointers.
UNWIND_PROGS := tests/bin/uw-cxxthrow tests/bin/uw-sigalloc tests/bin/uw-jmpthreads \
	tests/bin/uw-bigframe tests/bin/uw-offsets tests/bin/liblockalloc.so \
	tests/bin/uw-lockexe tests/bin/uw-nocfi tests/bin/uw-memo
TEST_BUILD += $(UNWIND_PROGS)

tests/bin/uw-cxxthrow: tests/unwind/cxxthrow.cc
	@mkdir -p tests/bin
	$(call quiet,CXX,$@)$(CXX) -g -O2 -o $@ $<

tests/bin/uw-sigalloc: tests/unwind/sigalloc.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $<

tests/bin/uw-jmpthreads: tests/unwind/jmpthreads.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -fomit-frame-pointer -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $< -lpthread

tests/bin/uw-bigframe: tests/unwind/bigframe.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -fomit-frame-pointer -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $<

tests/bin/uw-offsets: tests/unwind/offsets.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -fomit-frame-pointer -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $<

# -fno-omit-frame-pointer: the callers of the frames without CFI keep rbp
tests/bin/uw-nocfi: tests/unwind/nocfi.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O1 -fno-omit-frame-pointer -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $<

tests/bin/liblockalloc.so: tests/unwind/lockalloc.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -fPIC -shared -std=gnu11 $(WARN) -o $@ $<

# the same allocator built into the executable (as rustc's jemalloc is):
# the loader's malloc then, ahead of libmemprov.so's
tests/bin/uw-lockexe: tests/progs/unwlock.c tests/unwind/lockalloc.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -rdynamic -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $^ -lpthread

# bench/churn.c as the benchmark builds it (bench/bin is not part of `make test`).
tests/bin/uw-churn: bench/churn.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -std=gnu11 $(WARN) -O2 -g -fno-omit-frame-pointer \
		-fno-optimize-sibling-calls -D_GNU_SOURCE -o $@ $< -lpthread

TEST_BUILD += tests/bin/uw-churn

tests/bin/uw-memo: tests/unwind/memo.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -std=gnu11 $(WARN) -D_GNU_SOURCE -o $@ $< -lpthread
