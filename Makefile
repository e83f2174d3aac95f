# MRC-XDP build. `make` builds everything into build/; `make test` and
# `make demo` are the two commands the README promises. `V=1` shows the
# commands instead of the short labels.

.DELETE_ON_ERROR:
.SUFFIXES:

PREFIX	?= /usr/local
BUILD	:= build
BPF_OUT	:= $(BUILD)/bpf
SKEL	:= $(BUILD)/skel

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# --- tool probing ----------------------------------------------------------
# Prefer the newest clang Debian offers: newer ones emit better BPF code.
CLANG	?= $(firstword $(foreach c,clang-19 clang-16 clang-15 clang-14 clang,\
		$(if $(shell command -v $(c) 2>/dev/null),$(c))))
BPFTOOL	?= $(firstword $(foreach c,bpftool /usr/sbin/bpftool,\
		$(if $(shell command -v $(c) 2>/dev/null),$(c))))
PKG_CONFIG ?= pkg-config
CC	?= gcc

# name:package pairs, reported when missing.
REQUIRED_TOOLS := clang:clang bpftool:bpftool pkg-config:pkg-config
REQUIRED_LIBS  := libbpf:libbpf-dev libxdp:libxdp-dev

define check_tool
$(if $(shell command -v $(word 1,$(subst :, ,$(1))) 2>/dev/null),,\
	$(word 1,$(subst :, ,$(1))) (package $(word 2,$(subst :, ,$(1)))))
endef
define check_lib
$(if $(shell $(PKG_CONFIG) --exists $(word 1,$(subst :, ,$(1))) 2>/dev/null && echo y),,\
	$(word 1,$(subst :, ,$(1))) (package $(word 2,$(subst :, ,$(1)))))
endef
MISSING := $(strip $(foreach t,$(REQUIRED_TOOLS),$(call check_tool,$(t))) \
		   $(foreach l,$(REQUIRED_LIBS),$(call check_lib,$(l))))

# --- flags -----------------------------------------------------------------
ARCH	:= $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -Wall -Werror -D__TARGET_ARCH_$(ARCH) \
	      -I$(BUILD) -Iinclude -Ibpf/include
CFLAGS	?= -O2 -g
CFLAGS	+= -Wall -Wextra -Werror -std=gnu11 -Iinclude -Iuser -I$(SKEL) -MMD -MP
LIBBPF_CFLAGS = $(shell $(PKG_CONFIG) --cflags libbpf libxdp 2>/dev/null)
LIBBPF_LIBS   = $(shell $(PKG_CONFIG) --libs libbpf libxdp 2>/dev/null) -lelf -lz

# --- what we build ---------------------------------------------------------
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BPF_OUT)/%.bpf.o,$(BPF_SRCS))
SKELS     := $(patsubst bpf/%.bpf.c,$(SKEL)/%.skel.h,$(BPF_SRCS))
BPF_HDRS  := $(wildcard bpf/*.h) $(wildcard bpf/include/*.h) $(wildcard include/mrc/*.h)

LIB_SRCS  := $(wildcard user/lib/*.c)
LIB_OBJS  := $(patsubst user/lib/%.c,$(BUILD)/obj/lib/%.o,$(LIB_SRCS))
LIB       := $(BUILD)/libmrcutil.a

MRC_SRCS  := $(wildcard user/libmrc/*.c)
# libmrc carries the two helpers it uses, so applications link one archive.
MRC_OBJS  := $(patsubst user/libmrc/%.c,$(BUILD)/obj/libmrc/%.o,$(MRC_SRCS)) \
	     $(BUILD)/obj/lib/ev_profile.o $(BUILD)/obj/lib/parse.o \
	     $(BUILD)/obj/lib/ev_state.o
LIBMRC    := $(BUILD)/libmrc.a

PROGS     := $(BUILD)/mrc-labctl $(BUILD)/mrc-lab-traffic $(BUILD)/mrcd \
	     $(BUILD)/mrcctl $(BUILD)/mrc-perf $(BUILD)/mrc-tcp-timeline \
	     $(BUILD)/mrc-bpf-cost
# The BPF unit tests' fixture (skeleton, packets, QP set-up), shared by
# test_mrc_xdp and mrc-bpf-cost.
FIXTURE_OBJ := $(BUILD)/obj/tests/lib/mrc_fixture.o
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/*.c))
BPF_TESTS  := $(patsubst tests/bpf/%.c,$(BUILD)/tests/%,$(wildcard tests/bpf/*.c))

.PHONY: all deps check-tools test demo bench install clean
all: check-tools $(BPF_OBJS) $(SKELS) $(LIBMRC) $(PROGS) $(UNIT_TESTS) $(BPF_TESTS)

check-tools:
ifneq ($(MISSING),)
	@echo "error: missing build tools: $(MISSING)" >&2
	@echo "       run 'make deps' (tools/install-deps.sh) to install them" >&2
	@exit 1
endif

deps:
	$(Q)tools/install-deps.sh

# The two README commands install what they need first, then run.
test:
	$(Q)tools/install-deps.sh -q
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/run.sh

demo:
	$(Q)tools/install-deps.sh -q
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

# The side-by-side benchmark (docs/PERFORMANCE.md): MRC-XDP, MPTCP, TCP and
# MRC-XDP on one EV. BENCH_ARGS passes options, e.g. BENCH_ARGS=--quick.
bench:
	$(Q)tools/install-deps.sh -q
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/bench $(BENCH_ARGS)

# --- BPF -------------------------------------------------------------------
# vmlinux.h comes from the running kernel's BTF (CO-RE relocates field
# offsets at load time, so the objects still run on other kernels).
$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

$(BPF_OUT)/%.bpf.o: bpf/%.bpf.c $(BPF_HDRS) $(BUILD)/vmlinux.h
	$(call msg,CLANG,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(SKEL)/%.skel.h: $(BPF_OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

# --- userspace -------------------------------------------------------------
$(BUILD)/obj/%.o: user/%.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LIBBPF_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(BUILD)/mrc-labctl: $(BUILD)/obj/labctl.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -o $@

$(BUILD)/mrcd: $(BUILD)/obj/mrcd.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -o $@

$(BUILD)/mrcctl: $(BUILD)/obj/mrcctl.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -o $@

$(LIBMRC): $(MRC_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(BUILD)/obj/tools/%.o: tools/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LIBBPF_CFLAGS) -c $< -o $@

$(BUILD)/mrc-perf: $(BUILD)/obj/tools/mrc-perf/mrc_perf.o $(LIBMRC) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -o $@

$(BUILD)/mrc-tcp-timeline: $(BUILD)/obj/tools/tcp-timeline/tcp_timeline.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

# mrc-bpf-cost: the skeletons and the BPF tests' fixture.
$(BUILD)/obj/tools/bpf-cost/bpf_cost.o: tools/bpf-cost/bpf_cost.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/include $(LIBBPF_CFLAGS) -c $< -o $@

$(BUILD)/mrc-bpf-cost: $(BUILD)/obj/tools/bpf-cost/bpf_cost.o $(FIXTURE_OBJ) $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -o $@

$(BUILD)/mrc-lab-traffic: $(BUILD)/obj/lab_traffic.o
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@

$(BUILD)/obj/tests/%.o: tests/%.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/include $(LIBBPF_CFLAGS) -c $< -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -o $@

$(BUILD)/tests/%: $(BUILD)/obj/tests/bpf/%.o $(LIBMRC) $(LIB)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBBPF_LIBS) -o $@

$(BUILD)/tests/test_mrc_xdp: $(FIXTURE_OBJ)

# --- install ---------------------------------------------------------------
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/mrc-xdp/bpf \
		$(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(PROGS) $(DESTDIR)$(PREFIX)/lib/mrc-xdp/
	install -m 0755 tools/mrc-lab $(DESTDIR)$(PREFIX)/lib/mrc-xdp/
	ln -sf ../lib/mrc-xdp/mrc-lab $(DESTDIR)$(PREFIX)/bin/mrc-lab
	install -m 0644 $(filter-out %/trivial.bpf.o,$(BPF_OBJS)) $(DESTDIR)$(PREFIX)/lib/mrc-xdp/bpf/
	install -d $(DESTDIR)$(PREFIX)/include/mrc
	install -m 0644 include/mrc/mrc.h include/mrc/abi.h $(DESTDIR)$(PREFIX)/include/mrc/
	install -m 0644 $(LIBMRC) $(DESTDIR)$(PREFIX)/lib/
	for p in mrcd mrcctl mrc-perf; do ln -sf ../lib/mrc-xdp/$$p $(DESTDIR)$(PREFIX)/bin/$$p; done
	$(if $(wildcard docs/man/*.8),install -m 0644 $(wildcard docs/man/*.8) \
		$(DESTDIR)$(PREFIX)/share/man/man8/)

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
