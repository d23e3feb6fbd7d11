# memprov - build, test and install.  `make help` lists the targets.
#
#   make                     build interpose/libmemprov.so and analyzer/memprov
#                            (needs only the build libraries: checked by compiling)
#   make test                build everything and run tests/ (ends "N passed, N failed")
#   make install / uninstall PREFIX=/usr/local DESTDIR=
#   make deb                 a Debian package, built with dpkg-deb
#   make SANITIZE=address,undefined test   analyzer under ASan/UBSan
#   make V=1                 show the commands
#   make WERROR=1            warnings are errors (CI)

CC ?= cc
PREFIX ?= /usr/local
CFLAGS ?= -O2 -g
VERSION := $(shell cat VERSION)
# The preload object walks x86-64 frames: elsewhere only the analyzer is
# built (it reads traces made on x86-64). ARCH=... overrides the guess.
ARCH ?= $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
WARN := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes \
	-Wwrite-strings -Wvla -fno-common
ifeq ($(WERROR),1)
WARN += -Werror
endif
BASE_CFLAGS := -std=gnu11 $(WARN) -MMD -MP -D_GNU_SOURCE -Iinclude \
	-DMEMPROV_VERSION='"$(VERSION)"'

# The preload object: no sanitizer (it runs inside other programs), hidden
# symbols but the hooks and the public API. It carries no symbol table and
# no debugging information: gdb on a traced program put a breakpoint on
# the program's `add` in memprov's `add` (reach_roots.c) too, and stopped
# in the scan at exit. LIB_SYMS is the same object with both, for
# profiles, check-realign and debugging memprov (README: Debugging).
LIB := interpose/libmemprov.so
LIB_SYMS := interpose/libmemprov-syms.so
LIB_SRC := $(wildcard interpose/*.c)
LIB_OBJ := $(LIB_SRC:.c=.o)
LIB_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden -fno-omit-frame-pointer \
	-ftls-model=initial-exec -ffunction-sections \
	-I/usr/include/$(shell $(CC) -print-multiarch)
# The functions common runs execute come first in the text, together
# (interpose/hot.txt, written by scripts/hot-text.sh; the linker script is
# the linker's default with them first, scripts/text-order.sh): the
# kernel maps a library's pages 64 KiB at a time around a fault, and a
# traced Python process had all of memprov's 200 KiB of text resident.
LIB_LD := interpose/libmemprov.ld
LIB_LDFLAGS := -Wl,-z,nodelete -Wl,-z,now
# libunwind is not linked: unwind_lib.c opens it (RTLD_LOCAL) the first
# time a stack needs it, which common programs never do. Linked, it and
# its liblzma were loaded into every traced process (a sixth of what
# memprov cost `ls`), and it had to come after libgcc_s in the
# dependencies: its _Unwind_* exception functions shadowed libgcc_s's for
# programs that load libgcc_s later (libstdc++'s throws ran libunwind's
# unwinder; rustc hung on a missing source file). Its headers are still
# needed (libunwind-dev). t9500 checks the bindings.
LIB_LIBS := -ldl -lpthread

# The analyzer: sanitizers on request.
CLI := analyzer/memprov
CLI_SRC := $(wildcard analyzer/*.c)
CLI_OBJ := $(CLI_SRC:.c=.o)
# Hidden: a function of the analyzer's that a library also calls by name
# (libdw calls glibc's error(3) when it runs out of memory) must not take
# its place; ours, error(fmt, ...), exported, did and crashed there.
CLI_CFLAGS := $(BASE_CFLAGS) -fvisibility=hidden
CLI_LDFLAGS :=
ifneq ($(SANITIZE),)
CLI_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
CLI_LDFLAGS += -fsanitize=$(SANITIZE)
endif
CLI_LIBS := -ldw -lelf -lm

ifneq ($(V),1)
Q := @
quiet = @printf '  %-6s %s\n' $(1) $(2);
endif

# `make` needs only the build libraries: scripts/install-deps.sh --check
# compiles against each one (no package database is asked) and lists
# what is missing. The stamp keeps it to the first build.
BUILD_STAMP := .build-deps-ok

ifeq ($(ARCH),x86_64)
BUILD := $(LIB) $(CLI)
else
BUILD := $(CLI)
endif

.PHONY: all help test test-build demo bench fuzz install uninstall deb clean format deps check-layers check-realign hot-text

all: $(BUILD) ## build the preload library and the CLI (default)
ifneq ($(ARCH),x86_64)
	@echo "memprov: built the analyzer only: the preload object (libmemprov.so) is x86-64 only, this is $(ARCH)"
endif

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
		sed -E 's/^([a-zA-Z_-]+):.*## (.*)/  \1\t\2/' | expand -t 14

deps: ## install missing Debian packages (build and test)
	$(Q)CC='$(CC)' scripts/install-deps.sh build test

$(BUILD_STAMP): scripts/install-deps.sh
	$(Q)CC='$(CC)' scripts/install-deps.sh --check build
	$(Q)touch $@

interpose/%.o: interpose/%.c | $(BUILD_STAMP)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(LIB_CFLAGS) -c -o $@ $<

# -z now: the library's own calls into libc are bound at load, not at
# their first call, where the loader's lazy binding (_dl_runtime_resolve
# saving the vector registers) took 1 KiB more of a thread's stack inside
# a hook. The price: binding all 77 at load adds 30k instructions to a
# short process (ls -d /: 1.28 M traced lazily, 1.31 M now, callgrind;
# bench/profile.sh startup-callgrind), within the noise of its wall time.
$(LIB_LD): interpose/hot.txt scripts/text-order.sh
	$(call quiet,GEN,$@)scripts/text-order.sh interpose/hot.txt $(CC) $(CFLAGS) $(LIB_LDFLAGS) >$@.tmp && mv $@.tmp $@

$(LIB_SYMS): $(LIB_OBJ) $(LIB_LD)
	$(call quiet,LINK,$@)$(CC) -shared $(CFLAGS) $(LIB_LDFLAGS) \
		$$(test -s $(LIB_LD) && echo -Wl,-T,$(LIB_LD)) -o $@ $(LIB_OBJ) $(LIB_LIBS)

$(LIB): $(LIB_SYMS)
	$(call quiet,STRIP,$@)strip --strip-all -o $@ $(LIB_SYMS)

analyzer/%.o: analyzer/%.c | $(BUILD_STAMP)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(CLI_CFLAGS) -c -o $@ $<

# The HTML page's script and style sheet are files of their own
# (analyzer/html/), put into the program by html_assets.c (.incbin).
HTML_ASSETS := $(wildcard analyzer/html/*.js analyzer/html/*.css)
analyzer/html_assets.o: $(HTML_ASSETS)

$(CLI): $(CLI_OBJ)
	$(call quiet,LINK,$@)$(CC) $(CFLAGS) $(CLI_LDFLAGS) -o $@ $(CLI_OBJ) $(CLI_LIBS)

# Test programs, fake CUDA libraries and other areas add their rules and
# append to TEST_BUILD in their own fragments.
TEST_BUILD :=
-include $(sort $(wildcard tests/*.mk tests/*/*.mk bench/*.mk))

test-build: all $(TEST_BUILD) ## build what the tests need, without running them

test: all $(TEST_BUILD) ## build and run the test suite
	$(Q)CC='$(CC)' scripts/install-deps.sh test html
	$(Q)MEMPROV_SANITIZE='$(SANITIZE)' tests/run.sh

check-layers: all ## check the call graph: no cycle in analyzer/, interpose/ layered
	$(Q)scripts/check-layers.py --interpose

hot-text: $(LIB_SYMS) test-build ## rewrite interpose/hot.txt: the functions first in the preload object's text
	$(Q)scripts/hot-text.sh

check-realign: $(LIB_SYMS) ## check that every function of the preload object with aligned stack stores aligns its stack
	$(Q)scripts/check-realign.sh $(LIB_SYMS)

demo: all ## run the Parla eviction workload under memprov and diagnose it
	$(Q)scripts/demo.sh

# What `make install` puts under PREFIX, and `make uninstall` removes:
# each "SOURCE:DEST MODE", DEST relative to PREFIX.
INSTALL_FILES := $(CLI):bin/memprov:0755 \
	include/memprov.h:include/memprov.h:0644 \
	include/memprov_trace.h:include/memprov_trace.h:0644 \
	include/memprov_codec.h:include/memprov_codec.h:0644 \
	docs/memprov.1:share/man/man1/memprov.1:0644 \
	scripts/memprov-completion.bash:share/bash-completion/completions/memprov:0644 \
	python/memprov_pytest.py:share/memprov/python/memprov_pytest.py:0644 \
	$(foreach f,$(wildcard schemas/*.json),$(f):share/memprov/$(f):0644)
ifeq ($(ARCH),x86_64)
INSTALL_FILES += $(LIB):lib/libmemprov.so:0755
endif
install_src = $(word 1,$(subst :, ,$(1)))
install_dst = $(DESTDIR)$(PREFIX)/$(word 2,$(subst :, ,$(1)))
install_mode = $(word 3,$(subst :, ,$(1)))

install: all ## install CLI, library, headers, man page, completion, schemas under PREFIX (/usr/local)
	$(Q)$(foreach f,$(INSTALL_FILES),install -D -m $(call install_mode,$(f)) \
		$(call install_src,$(f)) $(call install_dst,$(f)) || exit 1;)
	@echo "memprov: installed under $(DESTDIR)$(PREFIX) (make uninstall PREFIX=$(PREFIX) removes it)"

uninstall: ## remove what make install put under PREFIX
	$(Q)$(foreach f,$(INSTALL_FILES),rm -f $(call install_dst,$(f));)
	-$(Q)rmdir $(DESTDIR)$(PREFIX)/share/memprov/schemas $(DESTDIR)$(PREFIX)/share/memprov/python $(DESTDIR)$(PREFIX)/share/memprov 2>/dev/null
	@echo "memprov: removed from $(DESTDIR)$(PREFIX)"

# make deb: `make install` into a staging directory (PREFIX=/usr), then
# scripts/make-deb.sh writes the control file and runs dpkg-deb.
DEB_STAGE := build/deb
deb: $(BUILD) ## build memprov_VERSION_ARCH.deb with dpkg-deb (no network)
	$(Q)scripts/install-deps.sh --check deb
	$(Q)rm -rf $(DEB_STAGE)
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(DEB_STAGE) PREFIX=/usr >/dev/null
	$(Q)scripts/make-deb.sh $(DEB_STAGE) $(VERSION) $(ARCH)

format: ## reformat the C sources with clang-format
	clang-format -i $(LIB_SRC) $(CLI_SRC) interpose/*.h analyzer/*.h include/*.h

clean: ## remove build outputs
	rm -f $(LIB) $(LIB_SYMS) $(LIB_LD) $(LIB_OBJ) $(CLI) $(CLI_OBJ) */*.d tests/bin/* $(BUILD_STAMP) memprov_*.deb
	rm -rf tests/out fuzz/build build

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
