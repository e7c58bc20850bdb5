# load.mk: `make test-load`, the MPI correctness programs in random settings while processes
# spin on every core (scripts/load_check.sh: what it runs and checks). LOAD_MINUTES (default
# 10) of runs on one node with the MPIs of LOAD_MPIS (default both); LOAD_CLUSTER=1 runs them
# on the emulated cluster instead (root, Open MPI); LOAD_SEED=S repeats a sequence.

LOAD_MINUTES ?= 10
LOAD_MPIS ?= both
LOAD_CLUSTER ?= 0
LOAD_SEED ?=

.PHONY: test-load
test-load:
	@case "$(LOAD_MPIS)" in both) ms="mpich openmpi" ;; *) ms="$(LOAD_MPIS)" ;; esac; \
	  [ "$(LOAD_CLUSTER)" = 1 ] && ms=openmpi; \
	  for m in $$ms; do scripts/setup.sh $$m || exit 1; \
	    $(MAKE) --no-print-directory MPI=$$m all || exit 1; done
	@scripts/load_check.sh --minutes $(LOAD_MINUTES) --mpi $(if $(filter 1,$(LOAD_CLUSTER)),openmpi --cluster,$(LOAD_MPIS)) \
	  $(if $(LOAD_SEED),--seed $(LOAD_SEED))
