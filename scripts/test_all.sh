#!/usr/bin/env bash
# make test: the suite (scripts/run_tests.sh) once per MPI named in $TEST_MPIS (default: MPICH,
# then Open MPI), and one closing line with the totals: "N passed, M failed".
# Everything must be built first, as `make test` does: `make MPI=... all` for each MPI, and for
# MPICH also the library that splits messages above $XCHG_TEST_PIECE bytes (default 4096),
# `make PIECE=4096 lib`, which the MPICH suite runs once more (scripts/cases/30-split.sh).
# XCHG_TEST_ONLY=REGEX (see run_tests.sh) runs only the cases whose name matches.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
passed=0 failed=0 skipped=0 status=0
for mpi in ${TEST_MPIS:-mpich openmpi}; do
    case $mpi in mpich) build=build ;; openmpi) build=build/openmpi ;; *) echo "test_all.sh: unknown MPI '$mpi'" >&2; exit 2 ;; esac
    echo "==== $mpi ($build)"
    log=$(mktemp)
    MPI=$mpi BUILD=$build scripts/run_tests.sh 2>&1 | tee "$log" | sed "s/^\([0-9]* passed, [0-9]* failed.*\)$/$mpi: \1/"
    rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] || status=1
    last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
    rm -f "$log"
    if [ -z "$last" ]; then
        echo "test_all.sh: the $mpi suite printed no summary (exit $rc)"
        failed=$((failed + 1))
        status=1
        continue
    fi
    passed=$((passed + $(echo "$last" | sed -E 's/^([0-9]+) passed.*/\1/')))
    failed=$((failed + $(echo "$last" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
    case $last in *skipped*) skipped=$((skipped + $(echo "$last" | sed -E 's/.* ([0-9]+) skipped.*/\1/'))) ;; esac
done
[ "$failed" -eq 0 ] || status=1
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
exit $status
