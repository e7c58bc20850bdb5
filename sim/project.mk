# project.mk: build/xchg-project, cost projections of MPI_Alltoall and MPI_Allgather to 65 536
# ranks against MPICH 4's default algorithms (sim/project.c, docs/projections.md).
# Included by the top Makefile. Like the tools, it links the library's objects (no MPI is
# started: selection and the cost models are pure code).
#
#   make projections   rewrite the tables of docs/projections.md from the models, and the
#                      simulated ones with build/xchg-sim (sim/sim.mk) where the tree has it
#                      (minutes: the p = 1024 runs)

PROJECT_SIM := $(if $(wildcard sim/sim.mk),$(BUILD)/xchg-sim)

.PHONY: projections
all: $(BUILD)/xchg-project

$(BUILD)/xchg-project: sim/project.c $(LIB_OBJ) $(HEADERS)
	$(MPICC) $(CFLAGS) -o $@ $< $(LIB_OBJ) $(LDLIBS)

projections: $(BUILD)/xchg-project $(PROJECT_SIM)
	$(BUILD)/xchg-project --update docs/projections.md $(if $(PROJECT_SIM),--sim $(PROJECT_SIM))
