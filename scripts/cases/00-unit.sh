# shellcheck shell=bash
# 00-unit.sh: the unit tests, sourced by run_tests.sh first (run_logged, begin_case, pass,
# fail, rc_reason, $TESTS): every $TESTS/unit/test_* (the pure code: no MPI launcher), one case
# each, "unit test_NAME"; none built at all is a failure.

unit_found=0
for t in "$TESTS"/unit/test_*; do
    [ -x "$t" ] || continue
    unit_found=1
    name="unit $(basename "$t")"
    begin_case "$name" || continue
    run_logged "$log" "$t"
    rc=$?
    if [ $rc -eq 0 ]; then
        pass "$name" "$start"
    else
        fail "$name" "$(rc_reason $rc)" "$log"
    fi
done
[ $unit_found -eq 1 ] || fail "unit tests" "none built under $TESTS/unit"
