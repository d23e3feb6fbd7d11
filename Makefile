# memprov - build, test and install.  `make help` lists the targets.
#
#   make                     build interpose/libmemprov.so and analyzer/memprov
#   make test                build everything and run tests/ (ends "N passed, N failed")
#   make SANITIZE=address,undefined test   analyzer under ASan/UBSan
#   make V=1                 show the commands
#   make WERROR=1            warnings are errors (CI)

CC ?= cc
PREFIX ?= /usr/local
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wstrict-prototypes -Wmissing-prototypes \
	-Wwrite-strings -Wvla -fno-common
ifeq ($(WERROR),1)
WARN += -Werror
endif
BASE_CFLAGS := -std=gnu11 $(WARN) -MMD -MP -D_GNU_SOURCE -Iinclude

# The preload object: no sanitizer (it runs inside other programs), hidden
# symbols but the hooks and the public API.
LIB := interpose/libmemprov.so
LIB_SRC := $(wildcard interpose/*.c)
LIB_OBJ := $(LIB_SRC:.c=.o)
LIB_CFLAGS := $(BASE_CFLAGS) -fPIC -fvisibility=hidden -fno-omit-frame-pointer \
	-ftls-model=initial-exec -I/usr/include/$(shell $(CC) -print-multiarch)
LIB_LIBS := -lunwind -ldl -lpthread

# The analyzer: sanitizers on request.
CLI := analyzer/memprov
CLI_SRC := $(wildcard analyzer/*.c)
CLI_OBJ := $(CLI_SRC:.c=.o)
CLI_CFLAGS := $(BASE_CFLAGS)
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

DEPS_STAMP := .deps-installed

.PHONY: all help test test-build demo bench fuzz install clean format deps check-layers

all: $(DEPS_STAMP) $(LIB) $(CLI) ## build the preload library and the CLI (default)

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
		sed -E 's/^([a-zA-Z_-]+):.*## (.*)/  \1\t\2/' | expand -t 14

deps: ## install missing Debian packages (build and test)
	$(Q)scripts/install-deps.sh build test
	$(Q)touch $(DEPS_STAMP)

$(DEPS_STAMP): scripts/install-deps.sh
	$(Q)scripts/install-deps.sh build test
	$(Q)touch $@

interpose/%.o: interpose/%.c $(DEPS_STAMP)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(LIB_CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJ)
	$(call quiet,LINK,$@)$(CC) -shared $(CFLAGS) -Wl,-z,nodelete -o $@ $(LIB_OBJ) $(LIB_LIBS)

analyzer/%.o: analyzer/%.c $(DEPS_STAMP)
	$(call quiet,CC,$@)$(CC) $(CFLAGS) $(CLI_CFLAGS) -c -o $@ $<

$(CLI): $(CLI_OBJ)
	$(call quiet,LINK,$@)$(CC) $(CFLAGS) $(CLI_LDFLAGS) -o $@ $(CLI_OBJ) $(CLI_LIBS)

# Test programs, fake CUDA libraries and other areas add their rules and
# append to TEST_BUILD in their own fragments.
TEST_BUILD :=
-include $(sort $(wildcard tests/*.mk tests/*/*.mk bench/*.mk))

test-build: all $(TEST_BUILD) ## build what the tests need, without running them

test: all $(TEST_BUILD) ## build and run the test suite
	$(Q)scripts/install-deps.sh test html
	$(Q)MEMPROV_SANITIZE='$(SANITIZE)' tests/run.sh

check-layers: all ## check the call graph: no cycle in analyzer/, interpose/ layered
	$(Q)scripts/check-layers.py --interpose

demo: all ## run the Parla eviction workload under memprov and diagnose it
	$(Q)scripts/demo.sh

install: all ## install library, CLI and headers under PREFIX (default /usr/local)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/bin/memprov
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libmemprov.so
	install -m 0644 include/memprov.h include/memprov_trace.h include/memprov_codec.h \
		$(DESTDIR)$(PREFIX)/include/

format: ## reformat the C sources with clang-format
	clang-format -i $(LIB_SRC) $(CLI_SRC) interpose/*.h analyzer/*.h include/*.h

clean: ## remove build outputs
	rm -f $(LIB) $(LIB_OBJ) $(CLI) $(CLI_OBJ) */*.d tests/bin/* $(DEPS_STAMP)
	rm -rf tests/out fuzz/build

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d)
