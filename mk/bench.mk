# mk/bench.mk: the measuring programs of bench/ (scripts/compare.sh, scripts/bench_apps.sh).
# They are plain MPI programs that neither link nor know xchg: the same binary runs natively
# and with the library preloaded. The harness is built with everything else (make all);
# bench/fft3d needs FFTW's MPI interface and is built by mk/bench-apps.mk.
#
#   make bench-progs   $(BUILD)/bench/harness, $(BUILD)/bench/comm_cycle, $(BUILD)/bench/init_time,
#                      $(BUILD)/bench/floor

BENCH_HARNESS := $(BUILD)/bench/harness

.PHONY: bench-progs fmt-bench
all: bench-progs
bench-progs: $(BENCH_HARNESS) $(BUILD)/bench/comm_cycle $(BUILD)/bench/init_time $(BUILD)/bench/floor

$(BUILD)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -o $@ $<

fmt: fmt-bench
fmt-bench:
	clang-format -i $(wildcard bench/*.c)
