# shellcheck shell=bash
# fuzz.sh: the short fuzzing run over every parser of xchg's input (mk/fuzz.mk, tests/fuzz/,
# docs/fuzzing.md), sourced by run_tests.sh (begin_case, pass, fail, $MPI, $LOGS). No MPI is
# started, so it runs once, in the MPICH suite only.
#
#  - `make fuzz`: installs clang and its libFuzzer runtime when missing, builds the harnesses
#    under build/fuzz/ (the pure core with AddressSanitizer and UndefinedBehaviorSanitizer)
#    and runs each one FUZZ_QUICK_SECONDS (8) over its committed corpus, tests/fuzz/corpus/;
#    a crash, a sanitizer finding, a broken check of a harness, an input that takes more than
#    5 s or a process above 2 GB fails it. The log names the harness and keeps libFuzzer's
#    report; the input that failed is saved under build/fuzz/artifacts/.

FUZZ_CASE_TIMEOUT=${FUZZ_TIMEOUT:-900} # XCHG_TEST_FUZZ_TIMEOUT: installing clang, building, runs

if [ "$MPI" = mpich ]; then
    name="fuzz: make fuzz (every parser, its corpus, sanitizers)"
    if begin_case "$name"; then
        timeout -k 10 "$FUZZ_CASE_TIMEOUT" make --no-print-directory fuzz </dev/null >"$log" 2>&1
        rc=$?
        runs=$(grep -c '^Done [0-9]* runs' "$log")
        nharness=$(find tests/fuzz -maxdepth 1 -name 'fuzz_*.c' | wc -l)
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            fail "$name" "timed out after $FUZZ_CASE_TIMEOUT s" "$log"
        elif [ "$rc" -ne 0 ]; then
            fail "$name" "$(grep -a -m 1 'FAILED' "$log" || echo "make fuzz: exit status $rc")" "$log"
        elif [ "$runs" -ne "$nharness" ]; then
            fail "$name" "$runs of the $nharness harnesses ran to the end" "$log"
        else
            pass "$name" "$start"
        fi
    fi
fi
