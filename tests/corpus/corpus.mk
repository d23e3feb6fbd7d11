# tests/corpus/corpus.mk - the accuracy corpus (tests/t2300-accuracy-corpus.sh):
# the same C and C++ sources at -O0 and at -O2 (inlining), a stripped
# program, a library with a symbol table but no DWARF.
CORPUS_PROGS := tests/bin/corpus-inline-O0 tests/bin/corpus-inline-O2 \
	tests/bin/corpus-cxxnew-O0 tests/bin/corpus-cxxnew-O2 \
	tests/bin/corpus-stripped tests/bin/corpus-stripped.full \
	tests/bin/libcorpus-nodwarf.so tests/bin/corpus-nodwarf
TEST_BUILD += $(CORPUS_PROGS)

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
