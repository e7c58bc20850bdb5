# tools.mk: objects a tool links besides tools/tool_common.c (the Makefile's $(BUILD)/xchg-%
# rule links $(TOOL_OBJ)). xchg-bench's --overhead mode is tools/bench_overhead.c; what both of
# its modes use is tools/bench_common.c.
BENCH_OBJ := $(BUILD)/obj/tools/bench_overhead.o $(BUILD)/obj/tools/bench_common.o
$(BUILD)/xchg-bench: TOOL_OBJ += $(BENCH_OBJ)
$(BUILD)/xchg-bench: $(BENCH_OBJ)
