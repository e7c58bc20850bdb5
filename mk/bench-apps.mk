# mk/bench-apps.mk: applications natively and under xchg, side by side (scripts/bench_apps.sh).
#
#   make bench-apps                 radix sort (MPICH and Open MPI), bench/fft3d and HPCC's MPIFFT
#                                   (Open MPI): installs what is missing, builds, runs, compares
#   make bench-apps BENCH_APPS_ARGS='--smoke'          a quick check with small inputs
#   make bench-apps BENCH_APPS_ARGS='--cluster 3,2,2,1' on the emulated cluster (root)
#   make bench-app-progs            $(BUILD)/bench/libcolltime.so, and bench/fft3d with MPI=openmpi
#
# bench/fft3d links FFTW's MPI interface (libfftw3-mpi-dev), which Debian builds against Open
# MPI only: it is built for MPI=openmpi. bench/colltime.c is the preloaded timer that gives every
# program's time inside the collectives.

BENCH_COLLTIME := $(BUILD)/bench/libcolltime.so
BENCH_FFT3D := $(BUILD)/bench/fft3d

.PHONY: bench-apps bench-app-progs
bench-apps:
	@scripts/bench_apps.sh $(BENCH_APPS_ARGS)

ifeq ($(MPI),openmpi)
bench-app-progs: $(BENCH_COLLTIME) $(BENCH_FFT3D)
else
bench-app-progs: $(BENCH_COLLTIME)
endif

$(BUILD)/bench/libcolltime.so: bench/colltime.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -shared -o $@ $< -ldl

$(BUILD)/bench/fft3d: bench/fft3d.c
	@mkdir -p $(dir $@)
	@[ "$(MPI)" = openmpi ] || { echo "bench/fft3d: Debian's libfftw3-mpi is built against Open MPI: make MPI=openmpi $@" >&2; exit 1; }
	$(MPICC) $(CFLAGS) -o $@ $< -lfftw3_mpi -lfftw3 -lm
