# xchg: one plain GNU Makefile. Sources are found by folder, so adding an algorithm needs no
# line here (docs/adding-an-algorithm.md); tools are tools/xchg-*.c, unit tests
# tests/unit/test_*.c, MPI test programs tests/mpi/*.c|*.f90, applications tests/apps/*.c.
#
#   make              build $(BUILD)/libxchg.so, the pure $(BUILD)/libxchgcore.a and the tools
#   make test         install missing packages, build, run the whole suite
#   make demo         install missing packages, build, run a short demonstration
#   make bench        benchmark sweep: CSV and PNG plots under $(BUILD)/bench
#   make bench-cluster  the sweep on emulated clusters (root): $(BUILD)/bench-cluster
#   make sim          the simulator at scale, p up to 4096: $(BUILD)/sim (sim/sim.mk)
#   make projections  docs/projections.md's tables from the cost models (sim/project.mk)
#   make MPI=openmpi  the same for Open MPI, in build/openmpi
#   make PIECE=4096   split every message above 4096 bytes (XCHG_PIECE_BYTES, algos/round.c;
#                     default 2^30), built apart in build/piece-4096 (build/openmpi/piece-4096)
#   make fmt | clean

MPI ?= mpich
ifdef PIECE
ifeq ($(shell echo '$(PIECE)' | grep -Ex '[1-9][0-9]{0,9}'),)
$(error PIECE must be a number of bytes from 1 to 2147483647, not '$(PIECE)')
endif
PIECE_DIR := /piece-$(PIECE)
endif
ifeq ($(MPI),openmpi)
BUILD ?= build/openmpi$(PIECE_DIR)
MPICC ?= mpicc.openmpi
MPIFC ?= mpif90.openmpi
else ifeq ($(MPI),mpich)
BUILD ?= build$(PIECE_DIR)
MPICC ?= $(shell command -v mpicc.mpich >/dev/null 2>&1 && echo mpicc.mpich || echo mpicc)
MPIFC ?= $(shell command -v mpif90.mpich >/dev/null 2>&1 && echo mpif90.mpich || echo mpif90)
else
$(error MPI must be mpich or openmpi, not '$(MPI)')
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -fPIC -fvisibility=default
ifdef WERROR
CFLAGS += -Werror
endif
ifdef PIECE
CFLAGS += -DXCHG_PIECE_BYTES=$(PIECE)
endif
LDLIBS = -lhwloc -lpthread -lm

# Two layers. The pure core (algos/sched: schedules and the shared types; tuning: cost models,
# registry, tuning table, size parser, workload generators) builds with a plain C compiler
# (PURE_CC) into $(BUILD)/libxchgcore.a: no mpi.h, no hwloc (headers of those names in
# $(BUILD)/nompi stop the build with an #error if a core file includes one). The unit tests and
# xchg-sched link only the core. The MPI side
# (shim, algos) builds with $(MPICC); libxchg.so is both (LIB_SRC, LIB_OBJ: every source and
# object of the library, core included).
PURE_CC ?= cc
CORE_SRC := $(wildcard algos/sched/*.c tuning/*.c)
CORE_OBJ := $(patsubst %.c,$(BUILD)/core/%.o,$(CORE_SRC))
CORE_HEADERS := $(wildcard algos/sched/*.h tuning/*.h)
CORE_LIB := $(BUILD)/libxchgcore.a
NOMPI := $(BUILD)/nompi/mpi.h $(BUILD)/nompi/hwloc.h
MPI_SRC := $(wildcard shim/*.c algos/*.c)
LIB_SRC := $(MPI_SRC) $(CORE_SRC)
LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(MPI_SRC)) $(CORE_OBJ)
HEADERS := $(wildcard shim/*.h algos/*.h algos/sched/*.h tuning/*.h tools/*.h)
TOOLS := $(patsubst tools/%.c,$(BUILD)/%,$(wildcard tools/xchg-*.c))
UNIT := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(wildcard tests/unit/test_*.c))
MPI_TESTS := $(patsubst tests/mpi/%.c,$(BUILD)/tests/%,$(wildcard tests/mpi/*.c)) \
             $(patsubst tests/mpi/%.f90,$(BUILD)/tests/%,$(wildcard tests/mpi/*.f90))
APPS := $(patsubst tests/apps/%.c,$(BUILD)/apps/%,$(wildcard tests/apps/*.c))

.PHONY: all lib core tools tests deps test demo bench bench-cluster fmt clean
all: lib tools tests
lib: $(BUILD)/libxchg.so $(CORE_LIB)
core: $(CORE_LIB)
tools: $(TOOLS)
tests: $(UNIT) $(MPI_TESTS) $(APPS)

$(BUILD)/obj/%.o: %.c $(HEADERS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@

$(NOMPI):
	@mkdir -p $(dir $@)
	@echo '#error "the pure core (libxchgcore.a) must not include $(notdir $@)"' > $@

$(BUILD)/core/%.o: %.c $(CORE_HEADERS) | $(NOMPI)
	@mkdir -p $(dir $@)
	$(PURE_CC) $(CFLAGS) -I$(BUILD)/nompi -c $< -o $@

$(CORE_LIB): $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

# -z now: the library's imports (PMPI_*, libm, libc) are bound when it is loaded (the loader's
# start-up read 0.29 to 0.34 M cycles with and without, LD_DEBUG=statistics), not at their first
# call in the middle of a program's first collectives, where binding one took up to 20 us on the
# 2-core VM (docs/results.md, stop 33).
$(BUILD)/libxchg.so: $(LIB_OBJ)
	$(MPICC) -shared -Wl,-z,now -o $@ $^ $(LDLIBS)

# The MPI tools link the library's objects directly (no preload needed) and what they share
# (tools/tool_common.c); xchg-sched and the unit tests link only the pure core, with
# the plain compiler.
TOOL_OBJ := $(BUILD)/obj/tools/tool_common.o
$(BUILD)/xchg-%: tools/xchg-%.c $(LIB_OBJ) $(TOOL_OBJ) $(HEADERS)
	$(MPICC) $(CFLAGS) -o $@ $< $(TOOL_OBJ) $(LIB_OBJ) $(LDLIBS)

$(BUILD)/xchg-sched: tools/xchg-sched.c $(CORE_LIB) $(CORE_HEADERS) | $(NOMPI)
	$(PURE_CC) $(CFLAGS) -I$(BUILD)/nompi -o $@ $< $(CORE_LIB) -lm

$(BUILD)/tests/unit/%: tests/unit/%.c $(CORE_LIB) $(CORE_HEADERS) $(wildcard tests/unit/*.h) | $(NOMPI)
	@mkdir -p $(dir $@)
	$(PURE_CC) $(CFLAGS) -I$(BUILD)/nompi -o $@ $< $(CORE_LIB) -lm

# MPI test programs and applications know nothing of xchg: they are run with it preloaded.
# They may use the pure workload generators of tuning/workloads.c (no xchg symbols).
$(BUILD)/tests/%: tests/mpi/%.c $(wildcard tests/mpi/*.h) $(wildcard tuning/workloads.[ch])
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -o $@ $< $(wildcard tuning/workloads.c) -lm

$(BUILD)/tests/%: tests/mpi/%.f90 $(wildcard tests/mpi/*.inc)
	@mkdir -p $(dir $@)
	$(MPIFC) -O1 -fallow-argument-mismatch -J $(dir $@) -o $@ $<

$(BUILD)/apps/%: tests/apps/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -o $@ $< -lm

deps:
	@scripts/setup.sh $(MPI)

# The suite runs on every MPI in TEST_MPIS (default both; `make test TEST_MPIS=mpich` for one);
# for MPICH it also runs with a library that splits every message above TEST_PIECE bytes.
# XCHG_TEST_ONLY=REGEX in the environment runs only the cases whose name matches.
TEST_MPIS ?= mpich openmpi
TEST_PIECE ?= 4096
test:
	@for m in $(TEST_MPIS); do scripts/setup.sh $$m || exit 1; done
	@for m in $(TEST_MPIS); do $(MAKE) --no-print-directory MPI=$$m all || exit 1; done
	@case " $(TEST_MPIS) " in *" mpich "*) \
	  $(MAKE) --no-print-directory MPI=mpich PIECE=$(TEST_PIECE) lib || exit 1 ;; esac
	@TEST_MPIS="$(TEST_MPIS)" XCHG_TEST_PIECE=$(TEST_PIECE) scripts/test_all.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@MPI=$(MPI) BUILD=$(BUILD) scripts/demo.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@MPI=$(MPI) BUILD=$(BUILD) scripts/bench.sh

# the sweep on emulated clusters (root: network namespaces; see scripts/bench_cluster.sh)
bench-cluster: deps
	@$(MAKE) --no-print-directory all
	@MPI=$(MPI) BUILD=$(BUILD) scripts/bench_cluster.sh

# The simulator and the projections (sim/) bring their own rules; so do the topics under mk/
# (one file each: fuzzing, sanitizers, installation, benchmarks of applications).
-include $(wildcard sim/*.mk mk/*.mk)

fmt:
	clang-format -i $(wildcard shim/*.[ch] algos/*.[ch] algos/sched/*.[ch] tuning/*.[ch] \
	  tools/*.c tests/unit/*.[ch] tests/mpi/*.[ch] tests/apps/*.c)

clean:
	rm -rf build
