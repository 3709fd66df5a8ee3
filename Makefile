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
LIBS     := -lbpf -ldw -lelf -lz -lcjson -lprotobuf-c -lcurl -lcap -lstdc++ -lm -pthread

VMLINUX  := vmlinux/vmlinux.h
# One BPF source, one object per program set (bpf/ctrace.bpf.c says what
# each needs of the kernel). ctrace.skel.h, from the best set, is the one
# interface; the others' skeletons lend only their object's bytes.
PROGRAM_SETS := copy_str copy_user probe_read
BPF_OBJS := $(patsubst %,$(BUILD)/ctrace_%.bpf.o,$(PROGRAM_SETS))
SKEL     := $(BUILD)/ctrace.skel.h
SET_SKELS := $(BUILD)/ctrace_copy_user.skel.h $(BUILD)/ctrace_probe_read.skel.h

# The loader: every userspace/FOLDER/*.c; cli/main.c holds main(), so the unit tests
# and benchmarks link the others.
LOADER_SRCS := $(wildcard userspace/*/*.c userspace/*/*/*.c)
# perfetto_trace.pb-c.c: protoc-c's code for userspace/encode/perfetto/perfetto_trace.proto
# (-o FILE.pftrace), generated here so that the .proto stays its one source.
PB_GEN      := $(BUILD)/perfetto_trace.pb-c.c $(BUILD)/perfetto_trace.pb-c.h
LOADER_OBJS := $(patsubst userspace/%.c,$(BUILD)/userspace/%.o,$(LOADER_SRCS)) $(BUILD)/userspace/perfetto_trace.pb-c.o
LIB_OBJS    := $(filter-out $(BUILD)/userspace/cli/main.o,$(LOADER_OBJS))

# Programs that use include/ctrace.h: the bundled example and the test targets.
EXAMPLES    := $(patsubst examples/%.c,$(BUILD)/examples/%,$(wildcard examples/*.c))
TEST_PROGS  := $(patsubst tests/programs/%.c,$(BUILD)/tests/programs/%,$(wildcard tests/programs/*.c)) \
	$(patsubst tests/programs/%.cpp,$(BUILD)/tests/programs/%,$(wildcard tests/programs/*.cpp))
UNIT_TESTS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(wildcard tests/unit/test_*.c))
INTEG_TESTS := $(patsubst tests/integration/%.c,$(BUILD)/tests/integration/%,$(wildcard tests/integration/test_*.c))
TEST_HELPER_OBJS := $(patsubst tests/lib/%.c,$(BUILD)/tests/lib/%.o,$(wildcard tests/lib/*.c))
# tests/lib/json_strict.c is the loader's strict JSON scanner (and its UTF-8 decoder).
TEST_HELPER_OBJS += $(BUILD)/userspace/encode/json/json_check.o $(BUILD)/userspace/encode/json/json_writer.o $(BUILD)/userspace/io/write_behind.o \
	$(BUILD)/userspace/io/trace_sink.o
# trace_sink converts to Perfetto's protobuf as it writes (pftrace.h).
TEST_HELPER_OBJS += $(BUILD)/userspace/encode/perfetto/pftrace_write.o $(BUILD)/userspace/offline/pftrace_read.o $(BUILD)/userspace/lib/key_map.o \
	$(BUILD)/userspace/perfetto_trace.pb-c.o

.PHONY: test-program-sets fuzz all clean test unit-test header-test integration-test install deps deps-test demo bench bench-e2e
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
# libbpf's usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> is in
# the multiarch directory, which -target bpf does not search.
BPF_SYS_INCLUDES := -idirafter /usr/include/$(shell $(CC) -dumpmachine)
$(BUILD)/ctrace_%.bpf.o: bpf/ctrace.bpf.c bpf/ctrace_record.h $(VMLINUX) | $(BUILD)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -DCTRACE_SET=CTRACE_SET_$(shell echo $* | tr a-z A-Z) \
		$(WARN) $(BPF_WARN) -Ivmlinux -Ibpf $(BPF_SYS_INCLUDES) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

# Every set's skeleton must declare what ctrace.skel.h declares (the same
# maps, programs and globals at the same offsets): the loader opens each
# set's object through ctrace.skel.h. Checked here, on their text without
# the object bytes.
SKEL_INTERFACE = sed -e 's/ctrace_bpf_copy_user\|ctrace_bpf_probe_read/ctrace_bpf/g;s/CTRACE_BPF[A-Z_]*_SKEL_H__/SKEL/' \
	-e '/^static inline const void \*ctrace_bpf__elf_bytes(size_t \*sz)$$/,/^}$$/d'
$(SKEL): $(BPF_OBJS)
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $(BUILD)/ctrace_copy_str.bpf.o name ctrace_bpf > $@.tmp
	$(Q)for set in copy_user probe_read; do \
		$(BPFTOOL) gen skeleton $(BUILD)/ctrace_$$set.bpf.o name ctrace_bpf_$$set > $(BUILD)/ctrace_$$set.skel.h && \
		{ $(SKEL_INTERFACE) $@.tmp; } > $(BUILD)/skel-interface.a && \
		{ $(SKEL_INTERFACE) $(BUILD)/ctrace_$$set.skel.h; } > $(BUILD)/skel-interface.b && \
		diff $(BUILD)/skel-interface.a $(BUILD)/skel-interface.b >&2 || \
		{ echo "ctrace-bpf: the $$set program set's maps, programs or globals differ from copy_str's (above)" >&2; exit 1; }; \
	done
	$(Q)rm -f $(BUILD)/skel-interface.[ab] && mv $@.tmp $@
$(SET_SKELS): $(SKEL)

$(BUILD)/userspace/%.o: userspace/%.c $(wildcard userspace/*/*.h userspace/*/*/*.h) bpf/ctrace_record.h usdt/ctrace_site.h $(SKEL) $(SET_SKELS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/perfetto_trace.pb-c.h: $(BUILD)/perfetto_trace.pb-c.c
$(BUILD)/perfetto_trace.pb-c.c: userspace/encode/perfetto/perfetto_trace.proto | $(BUILD)
	$(call msg,PROTOC,$@)
	$(Q)protoc-c --proto_path=userspace/encode/perfetto --c_out=$(BUILD) $<
$(BUILD)/userspace/perfetto_trace.pb-c.o: $(BUILD)/perfetto_trace.pb-c.c $(BUILD)/perfetto_trace.pb-c.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@
$(BUILD)/userspace/offline/pftrace_read.o $(BUILD)/userspace/encode/perfetto/pftrace_write.o: $(BUILD)/perfetto_trace.pb-c.h

$(BUILD)/ctrace-bpf: $(LOADER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LIBS) -o $@

# Programs that carry probes are built the way users build theirs: the
# header only, strict warnings, PIE (the distribution default).
PROG_CFLAGS := -g -O2 $(WARN) -pedantic -std=gnu11 -Iinclude -pthread
$(BUILD)/examples/%: examples/%.c include/ctrace.h $(wildcard usdt/*.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@ -lm

$(BUILD)/tests/programs/%: tests/programs/%.c $(wildcard tests/programs/*.h) include/ctrace.h $(wildcard usdt/*.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) $< -o $@ -lm

# C++ test programs (--usdt cxx: libstdc++'s own probes).
$(BUILD)/tests/programs/%: tests/programs/%.cpp | $(BUILD)
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -g -O2 $(WARN) -pedantic -std=gnu++17 $< -o $@

# --stacks' call chains (tests/programs/stacks/chains.c), gcc -O2 -g with and
# without frame pointers: a program, its shared library, C++ part and plugin.
STACK_SRC := tests/programs/stacks
STACK_DEPS := $(wildcard $(STACK_SRC)/*.h) include/ctrace.h $(wildcard usdt/*.h) | $(BUILD)
STACK_fp := -fno-omit-frame-pointer
STACK_nofp := -fomit-frame-pointer
STACK_stripped := -fomit-frame-pointer
STACK_PROGS := $(BUILD)/tests/programs/stack_chains_fp $(BUILD)/tests/programs/stack_chains_nofp \
	$(BUILD)/tests/programs/stack_chains_stripped
# The library as distributions ship theirs: no symbol table, no DWARF, .eh_frame kept.
$(BUILD)/tests/programs/libstk_stripped.so: $(BUILD)/tests/programs/libstk_nofp.so
	$(call msg,STRIP,$@)
	$(Q)strip -o $@ $<
$(BUILD)/tests/programs/libstk_%.so: $(STACK_SRC)/lib.c $(STACK_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) $(STACK_$*) -fPIC -shared $< -o $@
$(BUILD)/tests/programs/libstk_plugin_%.so: $(STACK_SRC)/plugin.c $(STACK_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) $(STACK_$*) -fPIC -shared $< -o $@
$(BUILD)/tests/programs/stack_chains_%: $(STACK_SRC)/chains.c $(STACK_SRC)/template.cpp \
		$(BUILD)/tests/programs/libstk_%.so $(BUILD)/tests/programs/libstk_plugin_%.so $(STACK_DEPS)
	$(call msg,CC,$@)
	$(Q)$(CXX) -g -O2 $(WARN) -pedantic -std=gnu++17 -Iinclude $(STACK_$*) -c $(STACK_SRC)/template.cpp -o $@.tmpl.o
	$(Q)$(CC) $(PROG_CFLAGS) $(STACK_$*) $< $@.tmpl.o -L$(@D) -lstk_$* -Wl,-rpath,'$$ORIGIN' -ldl -lstdc++ -o $@
	$(Q)rm -f $@.tmpl.o

$(BUILD)/tests/lib/%.o: tests/lib/%.c $(wildcard tests/lib/*.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib -c $< -o $@

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS) $(TEST_HELPER_OBJS) include/ctrace.h $(wildcard usdt/*.h) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(LDFLAGS) $(filter-out %.h,$^) $(LIBS) -lcmocka -o $@

# Its remote_read is the test's, which changes the memory read in the middle of a read (a takeover).
$(BUILD)/tests/unit/test_batch_path: LDFLAGS += -Wl,--wrap=remote_read

$(BUILD)/tests/integration/%: tests/integration/%.c $(TEST_HELPER_OBJS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(LDFLAGS) $(filter %.c %.o,$^) -lbpf -lcjson -lprotobuf-c -lcmocka -lz -lm -o $@

# test_pftrace reads .pftrace with the loader's reader (and protoc).
PFTRACE_OBJS := $(BUILD)/userspace/offline/pftrace_read.o $(BUILD)/userspace/lib/key_map.o $(BUILD)/userspace/perfetto_trace.pb-c.o
$(BUILD)/tests/integration/test_pftrace: tests/integration/test_pftrace.c $(TEST_HELPER_OBJS) $(PFTRACE_OBJS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(LDFLAGS) $(filter %.c %.o,$^) -lbpf -lcjson -lprotobuf-c -lcmocka -lz -lm -o $@

$(BUILD):
	$(Q)mkdir -p $@

# Install any missing Debian package (via sudo when not root).
deps:
	$(Q)./scripts/install-deps build
deps-test:
	$(Q)./scripts/install-deps test

# probe_sites: test_usdt_notes reads the notes of its real build too.
unit-test: $(UNIT_TESTS) $(BUILD)/tests/programs/probe_sites
	$(Q)set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done

# The public header in every compiler/standard/optimization/link mode; one
# build per compiler, language and link mode is traced by the real tracer.
header-test: $(BUILD)/ctrace-bpf
	$(Q)CTRACE_BPF=$(BUILD)/ctrace-bpf ./tests/header/compile_matrix

$(INTEG_TESTS): $(wildcard tests/integration/*.h)
integration-test: all $(TEST_PROGS) $(STACK_PROGS) $(INTEG_TESTS)
	$(Q)CTRACE_BPF=$(BUILD)/ctrace-bpf CTRACE_TEST_PROGRAMS=$(BUILD)/tests/programs \
		./tests/run-integration $(INTEG_TESTS)

# The integration suite once per fallback BPF program set, forced, each
# with the attach of the oldest kernels it is for (bpf/ctrace.bpf.c):
# copy_user with perf uprobes (6.0-6.5), probe_read with perf uprobes and
# no BPF cookies (5.8-5.14). So every fallback runs here although this
# kernel has better. Not copy_str: the best set, which the suite's own run
# takes wherever it loads (and where it does not, forcing it fails).
PROGRAM_SET_RUNS := copy_user:CTRACE_NO_MULTI=1 probe_read:CTRACE_NO_MULTI=1:CTRACE_NO_COOKIES=1
test-program-sets: all $(TEST_PROGS) $(STACK_PROGS) $(INTEG_TESTS)
	$(Q)failed=; for run in $(PROGRAM_SET_RUNS); do \
		vars="CTRACE_PROGRAM_SET=$$(echo $$run | tr ':' ' ')"; start=$$(date +%s); \
		echo "==== $$vars"; \
		env $$vars CTRACE_BPF=$(BUILD)/ctrace-bpf CTRACE_TEST_PROGRAMS=$(BUILD)/tests/programs \
			./tests/run-integration $(INTEG_TESTS) || failed="$$failed $${run%%:*}"; \
		echo "==== $$vars: $$(( $$(date +%s) - start )) s"; \
	done; \
	if [ -n "$$failed" ]; then echo "test-program-sets: failed under:$$failed" >&2; exit 1; fi

# The README's test command: everything, on a fresh machine too.
test: deps-test
	$(Q)$(MAKE) --no-print-directory unit-test
	$(Q)$(MAKE) --no-print-directory header-test
	$(Q)$(MAKE) --no-print-directory integration-test

# Debian's 6.1 and 6.12 cloud kernels booted under qemu (TCG) with the
# tracer and a smoke suite inside; the traces are checked here
# (tests/kernels/run-kernels). KERNEL_CACHE: where the kernel packages go.
.PHONY: test-kernels kernel-test-build
KERNEL_PROGS := every_macro scopes launched dso_loader forker armed_hello foreign_probes lifecycle
kernel-test-build: all $(patsubst %,$(BUILD)/tests/programs/%,$(KERNEL_PROGS)) \
	$(BUILD)/tests/kernels/check_guest_traces $(BUILD)/tests/kernels/libearly.so $(BUILD)/tests/kernels/liblate.so
test-kernels:
	$(Q)./scripts/install-deps kernels
	$(Q)$(MAKE) --no-print-directory kernel-test-build
	$(Q)BUILD=$(BUILD) $(if $(KERNEL_CACHE),KERNEL_CACHE=$(KERNEL_CACHE)) ./tests/kernels/run-kernels
$(BUILD)/tests/kernels/check_guest_traces: tests/kernels/check_guest_traces.c $(TEST_HELPER_OBJS) | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib $(LDFLAGS) $(filter %.c %.o,$^) -lcjson -lprotobuf-c -lcmocka -lz -lm -o $@
# The dlopen()ed libraries, built the way test_libraries.c builds them.
$(BUILD)/tests/kernels/lib%.so: tests/programs/lib/probelib.c include/ctrace.h usdt/ctrace_site.h | $(BUILD)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -fPIC -O2 $(WARN) -Iinclude -DPROBELIB_NAME='"$*"' $< -o $@

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

# Row 7 of the table alone (root): Redis, patched with ctrace sites and
# built once into $(BUILD)/redis, under redis-benchmark, untraced and
# traced (tests/bench/redis/e2e; E2E_FORMAT=ctrace, pftrace... picks -o's
# format). Prints its rows, also written to $(BUILD)/bench-e2e.md.
bench-e2e: all
	$(Q)CC="$(CC)" ./tests/bench/redis/e2e $(BUILD) $(BUILD)/ctrace-bpf | tee $(BUILD)/bench-e2e.md

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)./scripts/demo

# The header's version (include/ctrace.h) for ctrace.pc; the pages and the
# .pc where man(1) and pkg-config(1) look by default under PREFIX.
HEADER_VERSION = $(shell sed -n 's/^\#define CTRACE_VERSION_MAJOR //p' include/ctrace.h).$(shell sed -n 's/^\#define CTRACE_VERSION_MINOR //p' include/ctrace.h)
MANDIR   ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(PREFIX)/share/pkgconfig
install: $(BUILD)/ctrace-bpf
	install -D -m 0755 $(BUILD)/ctrace-bpf $(DESTDIR)$(PREFIX)/bin/ctrace-bpf
	install -D -m 0644 include/ctrace.h $(DESTDIR)$(PREFIX)/include/ctrace-bpf/include/ctrace.h
	install -D -m 0644 -t $(DESTDIR)$(PREFIX)/include/ctrace-bpf/usdt usdt/*.h
	printf '#include "ctrace-bpf/include/ctrace.h"\n' > $(DESTDIR)$(PREFIX)/include/ctrace.h
	chmod 0644 $(DESTDIR)$(PREFIX)/include/ctrace.h
	install -D -m 0644 man/ctrace-bpf.8 $(DESTDIR)$(MANDIR)/man8/ctrace-bpf.8
	install -D -m 0644 man/ctrace.h.3 $(DESTDIR)$(MANDIR)/man3/ctrace.h.3
	mkdir -p $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(HEADER_VERSION)|' pkgconfig/ctrace.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/ctrace.pc
	chmod 0644 $(DESTDIR)$(PKGCONFIGDIR)/ctrace.pc

clean:
	rm -rf $(BUILD) build-asan build-fuzz $(VMLINUX)
