# shellcheck shell=bash
# soak.sh: the short form of tests/mpi/soak.c (sourced by run_tests.sh, which provides
# begin_case, preloaded, check_launch, report_launch, $TESTS and $MPI).
#
# soak makes its calls over 200 shapes and 100 communicators created and freed as it goes,
# every byte checked, and fails when VmRSS grows by more than 5 MB after its warm-up or its
# file descriptors, shared-memory files or System V segments grow at all. Here:
#   - auto, learning on (the default), 2 ranks, SOAK_CALLS calls;
#   - every collective forced to shm, 3 ranks: a shared segment made with each communicator's
#     first call and freed with it, 100 times over.
# The long form (10^6 calls; minutes) is run by hand:
#     scripts/xchgrun -n 2 build/tests/soak --calls 1000000

SOAK_CALLS=50000

if [ -x "$TESTS/soak" ]; then
    name="soak p=2 auto ($SOAK_CALLS calls, 100 communicators)"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_STATS=1 -- "$TESTS/soak" --calls "$SOAK_CALLS"
        check_launch $? "$log" soak
        if [ "$outcome" = pass ] && ! grep -aqE '^soak: rank 0 rss_kib [0-9]+ [0-9]+ [0-9]+ ' "$log"; then
            outcome=fail
            why="no 'soak: rank 0 rss_kib START WARM END ...' line"
        fi
        report_launch "$name" "$start" "$log"
    fi

    name="soak p=3 shm forced ($((SOAK_CALLS / 25)) calls, a segment per communicator)"
    if begin_case "$name"; then
        preloaded "$log" 3 XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_ALLTOALL=shm \
            XCHG_ALLGATHER=shm XCHG_ALLTOALLV=shm -- "$TESTS/soak" --calls $((SOAK_CALLS / 25))
        check_launch $? "$log" soak alltoall=shm allgather=shm alltoallv=shm
        report_launch "$name" "$start" "$log"
    fi
else
    fail "soak" "$TESTS/soak is not built"
fi
