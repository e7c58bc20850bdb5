# shellcheck shell=bash
# resources.sh: what xchg holds must never cost the program what it would have natively,
# sourced by run_tests.sh (begin_case, preloaded, native, check_launch, report_launch, $TESTS).
#  - many communicators: many_comms keeps 2000 communicators alive (duplicates and splits of
#    MPI_COMM_WORLD, duplicates of MPI_COMM_SELF) and makes the three collectives on each, every
#    element checked. MPICH has 2048 context ids per process: natively it fits, and under xchg it
#    must too (the contexts share private channels, shim/channel.c), under auto and with
#    every collective forced to the shm algorithms (whose segments must not cost context ids).
#    Run natively first, so that a failure of the program itself shows as such.

if [ -x "$TESTS/many_comms" ]; then
    name="resources many_comms p=2 2000 native"
    if begin_case "$name"; then
        native "$log" 2 -- "$TESTS/many_comms" 2000
        check_launch $? "$log" many_comms
        report_launch "$name" "$start" "$log"
    fi
    for mode in auto shm; do
        name="resources many_comms p=2 2000 $mode"
        begin_case "$name" || continue
        forced=()
        [ "$mode" = auto ] || forced=(XCHG_ALLTOALL=shm XCHG_ALLGATHER=shm XCHG_ALLTOALLV=shm)
        preloaded "$log" 2 XCHG_WAIT=yield "${forced[@]}" -- "$TESTS/many_comms" 2000
        check_launch $? "$log" many_comms
        report_launch "$name" "$start" "$log"
    done
fi
