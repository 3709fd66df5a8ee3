# ctrace-bpf - build the BPF object, its skeleton, the loader, the examples and
# the tests. `make V=1` shows the full commands.
.DELETE_ON_ERROR:
# Keep intermediate objects (tests/lib/*.o): relinking must not find them gone.
.SECONDARY:
.SUFFIXES:

BUILD    ?= build
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := x86

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

WARN     := -Wall -Wextra -Werror
CFLAGS   ?= -g -O2
# SANITIZE=1 builds the loader and the tests with ASan and UBSan.
ifeq ($(SANITIZE),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS  += -fsanitize=address,undefined
endif
ALL_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Ibpf -Iusdt -Iuserspace -DCTRACE_SITE_LAYOUT_ONLY
LIBS     := -lbpf -lelf -lz -lcjson -lm -pthread

VMLINUX  := vmlinux/vmlinux.h
BPF_OBJ  := $(BUILD)/ctrace.bpf.o
SKEL     := $(BUILD)/ctrace.skel.h

# The loader: every userspace/*.c; ctrace_bpf.c holds main().
LOADER_SRCS := $(wildcard userspace/*.c)
LOADER_OBJS := $(patsubst userspace/%.c,$(BUILD)/userspace/%.o,$(LOADER_SRCS))
LIB_OBJS    := $(filter-out $(BUILD)/userspace/ctrace_bpf.o $(BUILD)/userspace/trace_options.o $(BUILD)/userspace/cmd_%.o,$(LOADER_OBJS))

# Programs that use include/ctrace.h: the bundled example and the test targets.
EXAMPLES    := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
TEST_PROGS  := $(patsubst tests/programs/%.c,$(BUILD)/tests/programs/%,$(wildcard tests/programs/*.c))
UNIT_TESTS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(wildcard tests/unit/test_*.c))
INTEG_TESTS := $(patsubst tests/integration/%.c,$(BUILD)/tests/integration/%,$(wildcard tests/integration/test_*.c))
TEST_HELPER_OBJS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.o,$(wildcard tests/lib/*.c))

.PHONY: fuzz all clean test unit-test header-test integration-test install deps deps-test demo bench
all: $(BUILD)/ctrace-bpf $(EXAMPLES)

# vmlinux.h is generated from the running kernel's BTF (CO-RE: the object
# still loads on other kernels; only the types we use need to exist there).
$(VMLINUX):
	$(call msg,BTF,$@)
	$(Q)test -r /sys/kernel/btf/vmlinux || { echo "ctrace-bpf: this kernel has no BTF (/sys/kernel/btf/vmlinux): it needs CONFIG_DEBUG_INFO_BTF=y" >&2; exit 1; }
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

# BPF_KPROBE() hands every program a `ctx` it need not use.
BPF_WARN := -Wno-unused-parameter
$(BPF_OBJ): bpf/ctrace.bpf.c bpf/ctrace_record.h $(VMLINUX) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(WARN) $(BPF_WARN) -Ivmlinux -Ibpf -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(SKEL): $(BPF_OBJ)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name ctrace_bpf > $@

$(BUILD)/userspace/%.o: userspace/%.c $(wildcard userspace/*.h) bpf/ctrace_record.h usdt/ctrace_site.h $(SKEL) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/ctrace-bpf: $(LOADER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

# Programs that carry probes are built the way users build theirs: the
# header only, strict warnings, PIE (the distribution default).
PROG_CFLAGS := -g -O2 $(WARN) -pedantic -std=gnu11 -Iinclude -pthread
$(BUILD)/examples/%: examples/%.c include/ctrace.h usdt/ctrace_site.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@ -lm

$(BUILD)/tests/programs/%: tests/programs/%.c include/ctrace.h usdt/ctrace_site.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@ -lm

$(BUILD)/tests/lib/%.o: tests/lib/%.c $(wildcard tests/lib/*.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib -c $< -o $@

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS) $(TEST_HELPER_OBJS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(LDFLAGS) $^ $(LIBS) -lcmocka -o $@

$(BUILD)/tests/integration/%: tests/integration/%.c $(TEST_HELPER_OBJS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(LDFLAGS) $(filter %.c %.o,$^) -lcjson -lcmocka -lm -o $@

$(BUILD):
	$(Q)mkdir -p $@

# Install any missing Debian package (via sudo when not root).
deps:
	$(Q)./scripts/install-deps build
deps-test:
	$(Q)./scripts/install-deps test

unit-test: $(UNIT_TESTS)
	$(Q)set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done

# The public header in every compiler/standard/optimization/link mode; one
# build per compiler, language and link mode is traced by the real tracer.
header-test: $(BUILD)/ctrace-bpf
	$(Q)CTRACE_BPF=$(BUILD)/ctrace-bpf ./tests/header/compile_matrix

$(INTEG_TESTS): $(wildcard tests/integration/*.h)
integration-test: all $(TEST_PROGS) $(INTEG_TESTS)
	$(Q)CTRACE_BPF=$(BUILD)/ctrace-bpf CTRACE_TEST_PROGRAMS=$(BUILD)/tests/programs \
		./tests/run-integration $(INTEG_TESTS)

# The README's test command: everything, on a fresh machine too.
test: deps-test
	$(Q)$(MAKE) --no-print-directory unit-test
	$(Q)$(MAKE) --no-print-directory header-test
	$(Q)$(MAKE) --no-print-directory integration-test

# libFuzzer harnesses (tests/fuzz/: records -> JSON, and fix), ASan+UBSan,
# bounded in time (CI: 60 s).
FUZZ_SECONDS ?= 60
fuzz: deps-test
	$(Q)./tests/fuzz/run-fuzz $(FUZZ_SECONDS)

# Benchmarks (root): builds tests/bench/* and prints one table, also written
# to $(BUILD)/bench.md; PROFILE=1 adds where a traced event's time goes
# ($(BUILD)/bench-profile.md).
bench: all $(LIB_OBJS)
	$(Q)BUILD=$(BUILD) CC="$(CC)" LIB_OBJS="$(LIB_OBJS)" ./scripts/bench $(if $(filter 1,$(PROFILE)),--profile)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./scripts/demo

install: $(BUILD)/ctrace-bpf
	install -D -m 0755 $(BUILD)/ctrace-bpf $(DESTDIR)$(PREFIX)/bin/ctrace-bpf
	install -D -m 0644 include/ctrace.h $(DESTDIR)$(PREFIX)/include/ctrace-bpf/include/ctrace.h
	install -D -m 0644 usdt/ctrace_site.h $(DESTDIR)$(PREFIX)/include/ctrace-bpf/usdt/ctrace_site.h
	printf '#include "ctrace-bpf/include/ctrace.h"\n' > $(DESTDIR)$(PREFIX)/include/ctrace.h
	chmod 0644 $(DESTDIR)$(PREFIX)/include/ctrace.h

clean:
	rm -rf $(BUILD) build-asan build-fuzz $(VMLINUX)
