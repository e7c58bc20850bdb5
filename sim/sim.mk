# sim.mk: build/xchg-sim, the simulator (docs/sim.md), and `make sim`.
# It links the algorithms, schedules, registry and cost models with its own round layer
# (sim/engine.c defines xchg_exchange): every algos/*.c except round.c, never shim/.
# sim/project.c and sim/project.mk are the projections' (not part of the simulator).

SIM_SRC := $(filter-out algos/round.c,$(wildcard algos/*.c)) $(wildcard algos/sched/*.c) \
           $(wildcard tuning/*.c) $(filter-out sim/project.c,$(wildcard sim/*.c))
SIM_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(SIM_SRC))

.PHONY: sim
all: $(BUILD)/xchg-sim

$(BUILD)/obj/sim/%.o: sim/%.c $(HEADERS) $(wildcard sim/*.h)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@

$(BUILD)/xchg-sim: $(SIM_OBJ)
	$(MPICC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# up to p = 4096, with the wall time and peak memory of the largest run (scripts/sim.sh)
sim: $(BUILD)/xchg-sim
	@BUILD=$(BUILD) scripts/sim.sh
