# MRC-XDP build. `make` builds everything into build/; `make test` and
# `make demo` are the two commands the README promises. `V=1` shows the
# commands instead of the short labels.

.DELETE_ON_ERROR:
.SUFFIXES:

BUILD	:= build
# The one version of everything (libmrc, mrcd --version, the package).
VERSION	:= $(shell cat VERSION)
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
REQUIRED_LIBS  := libbpf:libbpf-dev libxdp:libxdp-dev libfabric:libfabric-dev

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
# Folders by audience (docs/ARCHITECTURE.md, "Source tree"):
#   bpf/           the fast path (mrc.bpf.c over role headers in bpf/mrc/)
#   user/common/   code libmrc and the agent share; ships inside libmrc.a
#   user/libmrc/   the application library (libmrc.a)
#   user/agent/    agent-only code: mrcd's engines, mrcctl's commands
#   user/mrcd/, user/mrcctl/   the two agent programs
#   lab/           the lab: its BPF switch, ABI, mrc-labctl, traffic, mrc-lab
#   tools/NAME/    one folder per tool program
# Every program is the .c files of its folder; adding a file needs no edit
# here.
BPF_SRCS  := $(wildcard bpf/*.bpf.c lab/*.bpf.c)
BPF_OBJS  := $(patsubst %.bpf.c,$(BPF_OUT)/%.bpf.o,$(notdir $(BPF_SRCS)))
SKELS     := $(patsubst %.bpf.c,$(SKEL)/%.skel.h,$(notdir $(BPF_SRCS)))
BPF_HDRS  := $(wildcard bpf/*.h bpf/*/*.h lab/*.h include/mrc/*.h)

objs_of    = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

COMMON_OBJS := $(call objs_of,$(wildcard user/common/*.c))
COMMON      := $(BUILD)/libmrccommon.a
# libmrc carries the common code it uses, so applications link one archive.
LIBMRC_OBJS := $(call objs_of,$(wildcard user/libmrc/*.c)) $(COMMON_OBJS)
LIBMRC      := $(BUILD)/libmrc.a
AGENT_OBJS  := $(call objs_of,$(wildcard user/agent/*.c))
AGENT       := $(BUILD)/libmrcagent.a

MRCD_OBJS    := $(call objs_of,$(wildcard user/mrcd/*.c))
MRCCTL_OBJS  := $(call objs_of,$(wildcard user/mrcctl/*.c))
LABCTL_OBJS  := $(call objs_of,lab/labctl.c)
TRAFFIC_OBJS := $(call objs_of,lab/lab_traffic.c)
PERF_OBJS    := $(call objs_of,$(wildcard tools/mrc-perf/*.c))
TIMELINE_OBJS := $(call objs_of,$(wildcard tools/tcp-timeline/*.c))
BPFCOST_OBJS := $(call objs_of,$(wildcard tools/bpf-cost/*.c))
UDPBLAST_OBJS := $(call objs_of,$(wildcard tools/udp-blast/*.c))
# Test-only programs the e2e tests run (tests/tools/NAME/, a folder a
# program): built into build/tests/, never installed.
FORGE_OBJS   := $(call objs_of,$(wildcard tests/tools/mrc-forge/*.c))
ACK_FORGE_OBJS := $(call objs_of,$(wildcard tests/tools/mrc-ack-forge/*.c))
QP_FILL_OBJS := $(call objs_of,$(wildcard tests/tools/mrc-qp-fill/*.c))
HOLD_QPS_OBJS := $(call objs_of,$(wildcard tests/tools/mrc-hold-qps/*.c))
ICRC_CHECK_OBJS := $(call objs_of,$(wildcard tests/tools/mrc-icrc-check/*.c))
FI_CHECK_OBJS := $(call objs_of,$(wildcard tests/tools/mrc-fi-check/*.c))
BROKER_POKE_OBJS := $(call objs_of,$(wildcard tests/tools/mrc-broker-poke/*.c))
TEST_TOOLS   := $(BUILD)/tests/mrc-forge $(BUILD)/tests/mrc-ack-forge \
		$(BUILD)/tests/mrc-qp-fill $(BUILD)/tests/mrc-hold-qps \
		$(BUILD)/tests/mrc-icrc-check $(BUILD)/tests/mrc-fi-check \
		$(BUILD)/tests/mrc-broker-poke

# The libfabric provider (user/libfabric/, rules below "the libfabric provider").
FI_PROV      := $(BUILD)/libfabric/libmrc-fi.so

# The fuzzer of the fast path: its engine (tests/fuzz/*.c), shared with
# the test binary test_fuzz, and its program (tests/fuzz/mrc_fuzz/).
FUZZ_OBJS    := $(call objs_of,$(wildcard tests/fuzz/*.c))
MRCFUZZ_OBJS := $(call objs_of,$(wildcard tests/fuzz/mrc_fuzz/*.c))

# Installed programs; mrc-bpf-cost and mrc-fuzz are developer tools built
# on the BPF tests' fixture, so they are built but not installed
# (installed tools link no test code); so is mrc-udp-blast, bench's
# plain-UDP limit (docs/PERFORMANCE.md).
INSTALLED_PROGS := $(BUILD)/mrc-labctl $(BUILD)/mrc-lab-traffic $(BUILD)/mrcd \
	     $(BUILD)/mrcctl $(BUILD)/mrc-perf $(BUILD)/mrc-tcp-timeline
PROGS     := $(INSTALLED_PROGS) $(BUILD)/mrc-bpf-cost $(BUILD)/mrc-fuzz \
	     $(BUILD)/mrc-udp-blast

# The BPF unit tests' fixture (skeleton, packets, QP set-up), shared by
# the BPF tests and mrc-bpf-cost.
FIXTURE_OBJS := $(call objs_of,$(wildcard tests/lib/*.c))

# A test is tests/{unit,bpf}/test_NAME.c or a folder tests/{unit,bpf}/test_NAME/
# whose .c files link into one binary build/tests/test_NAME.
test_names = $(sort $(basename $(notdir $(wildcard $(1)/test_*.c))) \
	     $(notdir $(patsubst %/,%,$(wildcard $(1)/test_*/))))
test_srcs  = $(wildcard $(1)/$(2).c $(1)/$(2)/*.c)
UNIT_NAMES := $(call test_names,tests/unit)
BPF_NAMES  := $(call test_names,tests/bpf)
UNIT_TESTS := $(addprefix $(BUILD)/tests/,$(UNIT_NAMES))
BPF_TESTS  := $(addprefix $(BUILD)/tests/,$(BPF_NAMES))
TEST_OBJS  := $(foreach n,$(UNIT_NAMES),$(call objs_of,$(call test_srcs,tests/unit,$(n)))) \
	      $(foreach n,$(BPF_NAMES),$(call objs_of,$(call test_srcs,tests/bpf,$(n)))) \
	      $(FIXTURE_OBJS) $(FUZZ_OBJS) $(MRCFUZZ_OBJS)

.PHONY: all deps check-tools test demo bench fuzz lib install deb clean
all: check-tools $(BPF_OBJS) $(SKELS) $(LIBMRC) $(PROGS) $(UNIT_TESTS) $(BPF_TESTS) \
	$(TEST_TOOLS) $(FI_PROV)

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

# The fast path's fuzzer (docs/SECURITY.md, "Fuzzing"): 1,000,000 random
# and mutated frames through every XDP and TC program, invariants checked
# after each. FUZZ_ARGS passes options, e.g. FUZZ_ARGS='--seed 7'.
fuzz:
	$(Q)tools/install-deps.sh -q
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(BUILD)/mrc-fuzz --frames 1000000 $(FUZZ_ARGS)

# --- BPF -------------------------------------------------------------------
# vmlinux.h comes from the running kernel's BTF (CO-RE relocates field
# offsets at load time, so the objects still run on other kernels).
$(BUILD)/vmlinux.h:
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@

define bpf_obj_rule
$(BPF_OUT)/%.bpf.o: $(1)/%.bpf.c $$(BPF_HDRS) $$(BUILD)/vmlinux.h
	$$(call msg,CLANG,$$@)
	$$(Q)mkdir -p $$(@D)
	$$(Q)$$(CLANG) $$(BPF_CFLAGS) -I$(1) -c $$< -o $$@
endef
$(eval $(call bpf_obj_rule,bpf))
$(eval $(call bpf_obj_rule,lab))

$(SKEL)/%.skel.h: $(BPF_OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*) > $@

# --- userspace -------------------------------------------------------------
# One compile rule for every C file: build/obj/<its path>.o.
$(BUILD)/obj/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(EXTRA_CFLAGS) $(VERSION_CFLAGS) $(LIBBPF_CFLAGS) -c $< -o $@

# The objects that say the version, rebuilt when it changes.
VERSION_USERS := $(call objs_of,user/libmrc/base.c user/mrcd/main.c)
$(VERSION_USERS) $(BUILD)/pic/user/libmrc/base.o: VERSION
$(VERSION_USERS) $(BUILD)/pic/user/libmrc/base.o: VERSION_CFLAGS := -DMRC_VERSION='"$(VERSION)"'

# Only the objects that embed or drive a skeleton wait for one. The wait
# is order-only: the compiler's dependency files (-MMD) then make each
# object depend on the skeletons it really includes, so changing the BPF
# program rebuilds those objects and nothing else (tests/e2e/structure.sh).
SKEL_USERS := $(MRCD_OBJS) $(LABCTL_OBJS) $(BPFCOST_OBJS) $(FIXTURE_OBJS) \
	      $(FUZZ_OBJS) $(MRCFUZZ_OBJS) \
	      $(foreach n,$(BPF_NAMES),$(call objs_of,$(call test_srcs,tests/bpf,$(n))))
$(SKEL_USERS): | $(SKELS)
$(TEST_OBJS) $(BPFCOST_OBJS): EXTRA_CFLAGS := -Itests/include -Ilab -Itests/fuzz
$(LABCTL_OBJS): EXTRA_CFLAGS := -Ilab

$(COMMON): $(COMMON_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

$(LIBMRC): $(LIBMRC_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(AGENT): $(AGENT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

link = $(call msg,LINK,$@) mkdir -p $(@D) && $(CC) $(CFLAGS) $(filter %.o %.a,$^) $(1) -o $@

$(BUILD)/mrcd: $(MRCD_OBJS) $(AGENT) $(COMMON)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/mrcctl: $(MRCCTL_OBJS) $(AGENT) $(COMMON)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/mrc-labctl: $(LABCTL_OBJS) $(COMMON)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/mrc-lab-traffic: $(TRAFFIC_OBJS)
	$(Q)$(call link,)
$(BUILD)/mrc-perf: $(PERF_OBJS) $(AGENT) $(LIBMRC)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/mrc-tcp-timeline: $(TIMELINE_OBJS)
	$(Q)$(call link,)
$(BUILD)/mrc-udp-blast: $(UDPBLAST_OBJS)
	$(Q)$(call link,)
$(BUILD)/mrc-bpf-cost: $(BPFCOST_OBJS) $(FIXTURE_OBJS) $(AGENT) $(COMMON)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/mrc-fuzz: $(MRCFUZZ_OBJS) $(FUZZ_OBJS) $(FIXTURE_OBJS) $(AGENT) $(COMMON)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/tests/mrc-forge: $(FORGE_OBJS)
	$(Q)$(call link,)
$(BUILD)/tests/mrc-ack-forge: $(ACK_FORGE_OBJS) $(COMMON)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/tests/mrc-qp-fill: $(QP_FILL_OBJS) $(LIBMRC)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/tests/mrc-hold-qps: $(HOLD_QPS_OBJS) $(LIBMRC)
	$(Q)$(call link,$(LIBBPF_LIBS))
$(BUILD)/tests/mrc-icrc-check: $(ICRC_CHECK_OBJS)
	$(Q)$(call link,)
$(BUILD)/tests/mrc-fi-check: $(FI_CHECK_OBJS)
	$(Q)$(call link,$(FABRIC_LIBS))
$(BUILD)/tests/mrc-broker-poke: $(BROKER_POKE_OBJS) $(COMMON)
	$(Q)$(call link,$(LIBBPF_LIBS))

# The MPI allreduce program (tests/mpi/, docs/PERFORMANCE.md "Allreduce"),
# built with Open MPI's mpicc when libopenmpi-dev is there (else the MPI
# tests skip, saying why).
MPICC ?= $(if $(shell command -v mpicc 2>/dev/null),mpicc)
MPI_PROGS := $(if $(MPICC),$(BUILD)/tests/mpi-allreduce)
all: $(MPI_PROGS)
$(BUILD)/tests/mpi-allreduce: tests/mpi/allreduce.c
	$(call msg,MPICC,$@) mkdir -p $(@D) && $(MPICC) -O2 -g -Wall -Wextra -Werror -std=gnu11 $< -o $@

define unit_test_rule
$(BUILD)/tests/$(1): $(call objs_of,$(call test_srcs,tests/unit,$(1))) $(AGENT) $(LIBMRC)
	$$(Q)$$(call link,$$(LIBBPF_LIBS))
endef
define bpf_test_rule
$(BUILD)/tests/$(1): $(call objs_of,$(call test_srcs,tests/bpf,$(1))) $(FIXTURE_OBJS) $(AGENT) $(LIBMRC)
	$$(Q)$$(call link,$$(LIBBPF_LIBS))
endef
$(foreach n,$(UNIT_NAMES),$(eval $(call unit_test_rule,$(n))))
$(foreach n,$(BPF_NAMES),$(eval $(call bpf_test_rule,$(n))))
# The fuzzer's short run and checker tests link its engine.
$(BUILD)/tests/test_fuzz: $(FUZZ_OBJS) $(COMMON)

# --- libmrc as a shared library --------------------------------------------
# libmrc.so.$(LIBMRC_SOVERSION) for applications (`make lib`, installed by
# `make install`): libmrc's and the common code's objects compiled again
# as position-independent code into build/pic/, so the programs' own
# objects stay as they are. It exports the functions of mrc.h and nothing
# else (a version script made from the header), and links what it uses
# (libbpf) itself, so `pkg-config --libs mrc` is just -lmrc.
LIBMRC_SOVERSION := 0
LIBMRC_SO   := $(BUILD)/libmrc.so.$(LIBMRC_SOVERSION)
LIBMRC_MAP  := $(BUILD)/libmrc.map
PIC_OBJS    := $(patsubst $(BUILD)/obj/%,$(BUILD)/pic/%,$(LIBMRC_OBJS))

lib: $(LIBMRC) $(LIBMRC_SO)

$(BUILD)/pic/%.o: %.c
	$(call msg,CC-PIC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -fPIC $(VERSION_CFLAGS) $(LIBBPF_CFLAGS) -c $< -o $@

$(LIBMRC_MAP): include/mrc/mrc.h
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q){ echo 'MRC_$(LIBMRC_SOVERSION) {'; echo 'global:'; \
	  sed -n 's/^[a-z].*[ *]\(mrc_[a-z0-9_]*\)(.*/\t\1;/p' $< | sort -u; \
	  echo 'local: *;'; echo '};'; } > $@

$(LIBMRC_SO): $(PIC_OBJS) $(LIBMRC_MAP)
	$(call msg,LINK,$@)
	$(Q)$(CC) -shared -Wl,-soname,libmrc.so.$(LIBMRC_SOVERSION) \
		-Wl,--version-script=$(LIBMRC_MAP) -Wl,-z,defs -Wl,--as-needed \
		$(CFLAGS) $(PIC_OBJS) $(LIBBPF_LIBS) -o $@

# --- the libfabric provider ------------------------------------------------
# build/libfabric/libmrc-fi.so, which libfabric loads from FI_PROVIDER_PATH
# (docs/LIBFABRIC.md): the provider's objects and libmrc's, all
# position-independent, exporting fi_prov_ini only. The unit test of its
# wire protocol links proto.c alone.
FI_PROV_SRCS := $(wildcard user/libfabric/*.c)
FI_PROV_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(FI_PROV_SRCS))
FI_PROV_MAP  := user/libfabric/libmrc-fi.map
FABRIC_LIBS   = $(shell $(PKG_CONFIG) --libs libfabric 2>/dev/null)

$(FI_PROV): $(FI_PROV_OBJS) $(PIC_OBJS) $(FI_PROV_MAP)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -Wl,--version-script=$(FI_PROV_MAP) -Wl,-z,defs \
		$(CFLAGS) $(FI_PROV_OBJS) $(PIC_OBJS) $(LIBBPF_LIBS) $(FABRIC_LIBS) \
		-lpthread -o $@
$(BUILD)/tests/test_fi_proto: $(call objs_of,user/libfabric/proto.c)

# --- install ---------------------------------------------------------------
# `make install [PREFIX=/usr/local] [DESTDIR=...]`; `make deb` installs
# with PREFIX=/usr into a staging folder and packs that. The programs live
# in PKGLIBDIR (mrc-lab finds mrcd and mrc-labctl next to itself), with
# relative links in BINDIR/SBINDIR (right inside DESTDIR too); mrcd carries its BPF program inside (a
# skeleton), the objects in PKGLIBDIR/bpf are for bpftool/xdp-loader/ip.
PREFIX	?= /usr/local
BINDIR	?= $(PREFIX)/bin
SBINDIR	?= $(PREFIX)/sbin
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
LIBDIR	?= $(PREFIX)/lib$(if $(MULTIARCH),/$(MULTIARCH))
PKGLIBDIR ?= $(PREFIX)/lib/mrc-xdp
INCLUDEDIR ?= $(PREFIX)/include
MANDIR	?= $(PREFIX)/share/man
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
UNITDIR	?= $(PREFIX)/lib/systemd/system
INSTALLED_MANS := $(addprefix docs/man/,mrcd.8 mrcctl.8 mrc-perf.8 mrc-lab.8)
# Every @NAME@ of packaging/*.in, filled in.
subst_dirs = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
	-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@SBINDIR@|$(SBINDIR)|g' \
	-e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' -e 's|@VERSION@|$(VERSION)|g'

install: all lib
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(PKGLIBDIR)/bpf \
		$(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(INCLUDEDIR)/mrc \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(SYSCONFDIR)/mrc $(DESTDIR)$(UNITDIR)
	install -m 0755 $(INSTALLED_PROGS) lab/mrc-lab $(DESTDIR)$(PKGLIBDIR)/
	install -m 0644 $(filter-out %/trivial.bpf.o,$(BPF_OBJS)) $(DESTDIR)$(PKGLIBDIR)/bpf/
	for p in mrcctl mrc-perf mrc-lab; do \
		ln -sfnr $(DESTDIR)$(PKGLIBDIR)/$$p $(DESTDIR)$(BINDIR)/$$p; done
	ln -sfnr $(DESTDIR)$(PKGLIBDIR)/mrcd $(DESTDIR)$(SBINDIR)/mrcd
	install -m 0644 include/mrc/*.h $(DESTDIR)$(INCLUDEDIR)/mrc/
	install -m 0644 $(LIBMRC) $(DESTDIR)$(LIBDIR)/
	install -m 0644 $(LIBMRC_SO) $(DESTDIR)$(LIBDIR)/
	install -d $(DESTDIR)$(LIBDIR)/libfabric
	install -m 0644 $(FI_PROV) $(DESTDIR)$(LIBDIR)/libfabric/
	ln -sfn libmrc.so.$(LIBMRC_SOVERSION) $(DESTDIR)$(LIBDIR)/libmrc.so
	$(subst_dirs) packaging/mrc.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/mrc.pc
	$(subst_dirs) packaging/mrcd.service.in > $(DESTDIR)$(UNITDIR)/mrcd.service
	chmod 0644 $(DESTDIR)$(LIBDIR)/pkgconfig/mrc.pc $(DESTDIR)$(UNITDIR)/mrcd.service
	test -e $(DESTDIR)$(SYSCONFDIR)/mrc/mrcd.conf || \
		install -m 0644 packaging/mrcd.conf $(DESTDIR)$(SYSCONFDIR)/mrc/mrcd.conf
	install -m 0644 $(INSTALLED_MANS) $(DESTDIR)$(MANDIR)/man8/
	gzip -9nf $(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(INSTALLED_MANS)))
	[ -n "$(DESTDIR)" ] || ldconfig

# The Debian package build/mrc-xdp_VERSION_ARCH.deb (packaging/mkdeb.sh).
deb:
	$(Q)$(MAKE) --no-print-directory all lib
	$(Q)packaging/mkdeb.sh $(BUILD)/deb $(VERSION)

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
