# tests/corpus/corpus.mk - the accuracy corpus (tests/t2300-accuracy-corpus.sh):
# the same C and C++ sources at -O0 and at -O2 (inlining), a stripped
# program, a library with a symbol table but no DWARF.
CORPUS_PROGS := tests/bin/corpus-inline-O0 tests/bin/corpus-inline-O2 \
	tests/bin/corpus-cxxnew-O0 tests/bin/corpus-cxxnew-O2 \
	tests/bin/corpus-stripped tests/bin/corpus-stripped.full \
	tests/bin/libcorpus-nodwarf.so tests/bin/corpus-nodwarf tests/bin/corpus-tsd
TEST_BUILD += $(CORPUS_PROGS)

tests/bin/corpus-tsd: tests/corpus/tsd.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -std=gnu11 $(WARN) -pthread -o $@ $<

tests/bin/corpus-inline-O%: tests/corpus/inline.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O$* -std=gnu11 $(WARN) -o $@ $<

tests/bin/corpus-cxxnew-O%: tests/corpus/cxxnew.cc
	@mkdir -p tests/bin
	$(call quiet,CXX,$@)$(CXX) -g -O$* -std=c++17 -Wall -Wextra -o $@ $<

tests/bin/corpus-stripped.full: tests/corpus/stripped.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -std=gnu11 $(WARN) -o $@ $<

tests/bin/corpus-stripped: tests/bin/corpus-stripped.full
	$(call quiet,STRIP,$@)strip --strip-all -o $@ $<

tests/bin/libcorpus-nodwarf.so: tests/corpus/nodwarf_lib.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -O2 -g0 -fPIC -shared -std=gnu11 $(WARN) -o $@ $<

tests/bin/corpus-nodwarf: tests/corpus/nodwarf.c tests/bin/libcorpus-nodwarf.so
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -o $@ $< \
		-Ltests/bin -lcorpus-nodwarf -Wl,-rpath,'$$ORIGIN'

# The preload object's side (t2310): dlopen by relative path and with
# RTLD_DEEPBIND, how a process dies, the heap before main.
CORPUS_PROGS2 := tests/bin/corpus-dlrel tests/bin/libcorpus-dlrel.so \
	tests/bin/libcorpus-deep.so tests/bin/corpus-deaths tests/bin/libcorpus-fakealloc.so \
	tests/bin/corpus-cxxreplace tests/bin/libcorpus-cachealloc.so tests/bin/corpus-droprep \
	tests/bin/corpus-forkrep tests/bin/corpus-mallocx tests/bin/corpus-mallocx-libc
TEST_BUILD += $(CORPUS_PROGS2)

tests/bin/corpus-dlrel: tests/corpus/dlrel.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -o $@ $< -ldl

tests/bin/libcorpus-dlrel.so: tests/corpus/dlrel_lib.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -fPIC -shared -DLIB_KEEP=333 -std=gnu11 $(WARN) -o $@ $<

tests/bin/libcorpus-deep.so: tests/corpus/dlrel_lib.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -fPIC -shared -DLIB_KEEP=444 -Wl,-z,relro,-z,now \
		-std=gnu11 $(WARN) -o $@ $<

tests/bin/libcorpus-cachealloc.so: tests/corpus/cachealloc.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O2 -fPIC -shared -std=gnu11 $(WARN) -pthread -o $@ $<

tests/bin/corpus-mallocx: tests/corpus/mallocx.c tests/bin/libcorpus-cachealloc.so
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -o $@ $< \
		-Ltests/bin -lcorpus-cachealloc -Wl,-rpath,'$$ORIGIN'

# the same, libc's malloc first: cachealloc serves only its own API
tests/bin/corpus-mallocx-libc: tests/corpus/mallocx.c tests/bin/libcorpus-cachealloc.so
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -o $@ $< \
		-lc -Ltests/bin -lcorpus-cachealloc -Wl,-rpath,'$$ORIGIN'

tests/bin/corpus-forkrep: tests/corpus/forkrep.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -pthread -o $@ $<

tests/bin/corpus-droprep: tests/corpus/droprep.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -o $@ $<

tests/bin/corpus-deaths: tests/corpus/deaths.c
	@mkdir -p tests/bin
	$(call quiet,CC,$@)$(CC) -g -O0 -std=gnu11 $(WARN) -o $@ $<

tests/bin/libcorpus-fakealloc.so: tests/corpus/fakealloc.cc
	@mkdir -p tests/bin
	$(call quiet,CXX,$@)$(CXX) -g -O2 -fPIC -shared -std=c++17 -Wall -Wextra -o $@ $<

tests/bin/corpus-cxxreplace: tests/corpus/cxxreplace.cc
	@mkdir -p tests/bin
	$(call quiet,CXX,$@)$(CXX) -g -O0 -std=c++17 -Wall -Wextra -pthread -o $@ $<
