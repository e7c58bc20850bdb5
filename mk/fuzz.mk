# mk/fuzz.mk: libFuzzer harnesses of every parser of xchg's input (tests/fuzz/fuzz_*.c; what
# each one checks is in its header and in docs/fuzzing.md), built with clang into build/fuzz/,
# apart from the normal build: the pure core compiled again with AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer's coverage (every finding aborts), each harness
# linked against it.
#
#   make fuzz            build, then run each harness FUZZ_QUICK_SECONDS (default 8), FUZZ_JOBS
#                        (default: the processing units) at once, over its committed corpus
#                        (tests/fuzz/corpus/NAME, read only: new inputs go to
#                        build/fuzz/work/NAME); fails on any crash, sanitizer finding,
#                        broken check, timeout (FUZZ_TIMEOUT seconds for one input) or
#                        out-of-memory (FUZZ_RSS_MB)
#   make fuzz-long FUZZ_SECONDS=N   the campaign: each harness N seconds (default 600), one
#                        after another, nice'd, growing build/fuzz/corpus/NAME (kept between
#                        runs); logs and final statistics in build/fuzz/logs/NAME.log
#   make fuzz-merge      add what the campaign found that reaches new code (an edge) to the
#                        committed corpus (libFuzzer -merge=1)
#   make fuzz-coverage   line coverage of the parsers' sources by the committed corpus and
#                        the campaign's (-fprofile-instr-generate, llvm-profdata, llvm-cov):
#                        build/fuzz/coverage.txt
#   make fuzz-deps       install clang and its libFuzzer runtime when missing (apt-get)
#   FUZZ=NAME            any of these for one harness only (e.g. FUZZ=table_parse)

FUZZ_DIR := build/fuzz
FUZZ_CC ?= $(shell command -v clang-14 >/dev/null 2>&1 && echo clang-14 || echo clang)
FUZZ_PROFDATA ?= $(shell command -v llvm-profdata-14 >/dev/null 2>&1 && echo llvm-profdata-14 || echo llvm-profdata)
FUZZ_COV ?= $(shell command -v llvm-cov-14 >/dev/null 2>&1 && echo llvm-cov-14 || echo llvm-cov)
FUZZ_ALL := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ ?= $(FUZZ_ALL)
FUZZ_QUICK_SECONDS ?= 8
FUZZ_JOBS ?= $(shell nproc) # make fuzz: harnesses built and run at once (each its own seconds)
FUZZ_SECONDS ?= 600
FUZZ_TIMEOUT ?= 5
FUZZ_RSS_MB ?= 2048
# the campaign also steers by the values compared (the numbers and names the parsers look for)
FUZZ_LONG_OPTS ?= -use_value_profile=1
# fuzz-merge keeps an input of the campaign only when it reaches code (an edge) that the
# committed corpus does not, not for new hit counts: the committed corpus stays small
FUZZ_MERGE_OPTS ?= -use_counters=0
# the packages that bring clang and the libFuzzer runtime on Debian 12 (the runtime is only
# recommended by clang-14), and llvm-profdata/llvm-cov for fuzz-coverage
FUZZ_PKGS := clang-14 libclang-rt-14-dev
FUZZ_COV_PKGS := llvm-14

FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -O1 -g -std=gnu11 -Wall -Wextra -fno-omit-frame-pointer $(if $(WERROR),-Werror)
FUZZ_NOMPI := $(FUZZ_DIR)/nompi/mpi.h $(FUZZ_DIR)/nompi/hwloc.h
FUZZ_CORE_OBJ := $(patsubst %.c,$(FUZZ_DIR)/core/%.o,$(CORE_SRC))
FUZZ_COV_OBJ := $(patsubst %.c,$(FUZZ_DIR)/cov/core/%.o,$(CORE_SRC))
FUZZ_HEADERS := $(CORE_HEADERS) $(wildcard tests/fuzz/*.h)
FUZZ_BINS := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_ALL))
# the parsers, whose line coverage fuzz-coverage reports
FUZZ_PARSERS := tuning/table_parse.c tuning/table_load.c tuning/table_write.c \
                tuning/registry.c tuning/size.c tuning/env.c algos/sched/torus.c

# libFuzzer's options for every run of harness $$h (a shell variable of the recipes); its
# dictionary tests/fuzz/$$h.dict, else the one of its family (table_parse: table.dict)
FUZZ_OPTS = -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=$(FUZZ_RSS_MB) -print_final_stats=1 \
            $$(for d in tests/fuzz/$$h.dict tests/fuzz/$${h%%_*}.dict; do \
                 [ -f $$d ] && echo -dict=$$d && break; done)

.PHONY: fuzz fuzz-build fuzz-long fuzz-merge fuzz-coverage fuzz-deps fuzz-cov-deps

fuzz-deps:
	@$(call fuzz_install,$(FUZZ_PKGS))

fuzz-cov-deps:
	@$(call fuzz_install,$(FUZZ_COV_PKGS))

# install the packages of $(1) that are missing (as scripts/setup.sh does)
fuzz_install = missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || \
	    missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "fuzz: installing$$missing"; sudo=""; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  $$sudo apt-get update -qq && \
	  $$sudo apt-get install -y -qq --no-install-recommends $$missing </dev/null; fi

fuzz-build: fuzz-deps
	@$(MAKE) --no-print-directory -j$(FUZZ_JOBS) $(FUZZ_BINS)

$(FUZZ_NOMPI):
	@mkdir -p $(dir $@)
	@echo '#error "the pure core must not include $(notdir $@)"' > $@

$(FUZZ_DIR)/core/%.o: %.c $(CORE_HEADERS) | $(FUZZ_NOMPI)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link -I$(FUZZ_DIR)/nompi -c $< -o $@

$(FUZZ_DIR)/libxchgcore-fuzz.a: $(FUZZ_CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_DIR)/libxchgcore-fuzz.a $(FUZZ_HEADERS) | $(FUZZ_NOMPI)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer -I$(FUZZ_DIR)/nompi -o $@ $< \
	  $(FUZZ_DIR)/libxchgcore-fuzz.a -lm

# The short run: every harness over its committed corpus, new inputs into a scratch folder.
fuzz: fuzz-build
	@$(MAKE) --no-print-directory --output-sync=target -j$(FUZZ_JOBS) $(addprefix fuzz-run-,$(FUZZ))

# one harness's run of `make fuzz` (FUZZ_JOBS of them at once, each on a processing unit)
fuzz-run-%:
	@h=$*; \
	rm -rf $(FUZZ_DIR)/work/$$h && mkdir -p $(FUZZ_DIR)/work/$$h $(FUZZ_DIR)/artifacts && \
	echo "fuzz: $$h, $(FUZZ_QUICK_SECONDS) s" && \
	$(FUZZ_DIR)/fuzz_$$h $(FUZZ_OPTS) -max_total_time=$(FUZZ_QUICK_SECONDS) \
	  -artifact_prefix=$(FUZZ_DIR)/artifacts/$$h- $(FUZZ_DIR)/work/$$h tests/fuzz/corpus/$$h \
	  >$(FUZZ_DIR)/work/$$h.log 2>&1 || \
	{ tail -n 40 $(FUZZ_DIR)/work/$$h.log; echo "fuzz: $$h FAILED (log: $(FUZZ_DIR)/work/$$h.log)"; exit 1; }; \
	grep -E '^stat::number_of_executed_units|^Done' $(FUZZ_DIR)/work/$$h.log | tr '\n' ' '; echo

# The campaign: one harness after another, nice'd, its corpus kept in build/fuzz/corpus/NAME.
fuzz-long: fuzz-build
	@mkdir -p $(FUZZ_DIR)/logs $(FUZZ_DIR)/artifacts
	@for h in $(FUZZ); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$h && \
	  echo "fuzz-long: $$h, $(FUZZ_SECONDS) s (log: $(FUZZ_DIR)/logs/$$h.log)" && \
	  nice -n 10 $(FUZZ_DIR)/fuzz_$$h $(FUZZ_OPTS) $(FUZZ_LONG_OPTS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(FUZZ_DIR)/artifacts/$$h- $(FUZZ_DIR)/corpus/$$h tests/fuzz/corpus/$$h \
	    >$(FUZZ_DIR)/logs/$$h.log 2>&1 || \
	  { tail -n 40 $(FUZZ_DIR)/logs/$$h.log; echo "fuzz-long: $$h FAILED"; exit 1; }; \
	  grep -E '^stat::|^Done' $(FUZZ_DIR)/logs/$$h.log; \
	done

# What the campaign found that covers something new joins the committed corpus.
fuzz-merge: fuzz-build
	@for h in $(FUZZ); do \
	  [ -d $(FUZZ_DIR)/corpus/$$h ] || continue; \
	  echo "fuzz-merge: $$h"; \
	  $(FUZZ_DIR)/fuzz_$$h -merge=1 $(FUZZ_OPTS) $(FUZZ_MERGE_OPTS) tests/fuzz/corpus/$$h \
	    $(FUZZ_DIR)/corpus/$$h 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new files' || exit 1; \
	done

# Coverage: the harnesses again with clang's source-based coverage (no sanitizers), replaying
# the committed corpus and the campaign's; the report covers the parsers' sources.
$(FUZZ_DIR)/cov/core/%.o: %.c $(CORE_HEADERS) | $(FUZZ_NOMPI)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fprofile-instr-generate -fcoverage-mapping -I$(FUZZ_DIR)/nompi \
	  -c $< -o $@

$(FUZZ_DIR)/cov/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_COV_OBJ) $(FUZZ_HEADERS) | $(FUZZ_NOMPI)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping \
	  -I$(FUZZ_DIR)/nompi -o $@ $< $(FUZZ_COV_OBJ) -lm

.SECONDARY: $(FUZZ_COV_OBJ)

fuzz-coverage: fuzz-deps fuzz-cov-deps
	@$(MAKE) --no-print-directory $(patsubst %,$(FUZZ_DIR)/cov/fuzz_%,$(FUZZ))
	@tests/fuzz/coverage.sh $(FUZZ_PROFDATA) $(FUZZ_COV) $(FUZZ) >$(FUZZ_DIR)/coverage.txt
	@cat $(FUZZ_DIR)/coverage.txt
