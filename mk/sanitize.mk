# sanitize.mk: `make test-sanitize`, the MPI correctness programs under AddressSanitizer +
# UndefinedBehaviorSanitizer and ThreadSanitizer (scripts/sanitize.sh runs them and says which
# findings are suppressed, mk/sanitize/*.supp). For every MPI of SANITIZE_MPIS (default: the
# suite's TEST_MPIS) it builds everything as `make all` does (the programs stay uninstrumented),
# then the library twice more: $(B)/asan with -fsanitize=address,undefined and $(B)/tsan with
# -fsanitize=thread (B = build, build/openmpi; without -Werror: instrumented builds warn about
# what plain ones do not, gcc's -Wtsan about atomic fences for one), and
# build/sanitize/libkeep_modules.so. A few minutes for both MPIs.

SANITIZE_MPIS ?= $(TEST_MPIS)
SANITIZE_ASAN_CFLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
SANITIZE_TSAN_CFLAGS := -O1 -g -fsanitize=thread

.PHONY: test-sanitize
test-sanitize:
	@for m in $(SANITIZE_MPIS); do scripts/setup.sh $$m || exit 1; done
	@for m in $(SANITIZE_MPIS); do \
	  b=build; [ $$m = openmpi ] && b=build/openmpi; \
	  $(MAKE) --no-print-directory MPI=$$m all || exit 1; \
	  CFLAGS='$(SANITIZE_ASAN_CFLAGS)' $(MAKE) --no-print-directory MPI=$$m BUILD=$$b/asan \
	    WERROR= lib || exit 1; \
	  CFLAGS='$(SANITIZE_TSAN_CFLAGS)' $(MAKE) --no-print-directory MPI=$$m BUILD=$$b/tsan \
	    WERROR= lib || exit 1; \
	done
	@mkdir -p build/sanitize
	$(PURE_CC) -O2 -Wall -Wextra -shared -fPIC -o build/sanitize/libkeep_modules.so \
	  mk/sanitize/keep_modules.c
	@SANITIZE_MPIS="$(SANITIZE_MPIS)" scripts/sanitize.sh
