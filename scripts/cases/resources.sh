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
#  - the limit: comm_limit duplicates MPI_COMM_WORLD until the MPI library refuses (MPICH: 2048
#    context ids), an MPI_Alltoall on each; under xchg the program must hold as many as natively
#    but for at most 2 (the channel of the world's group, and the duplicate of MPI_COMM_SELF
#    that packing MPI_BOTTOM buffers uses), under auto and with every collective forced to shm.
#    Open MPI's limit is far higher: there both stop at 5000 and must be equal. Then comm_limit
#    with "orders" at 4 ranks: 30 splits of the world, each in another rank order (24 distinct
#    groups, more than the 16 channels a process holds): the communicators past the channels'
#    limit are served by the MPI library, every element right.
if [ -x "$TESTS/comm_limit" ]; then
    name="resources comm_limit p=2 native"
    if begin_case "$name"; then
        native "$log" 2 -- "$TESTS/comm_limit" 5000
        check_launch $? "$log" comm_limit
        native_held=$(sed -n 's/^comm_limit: held \([0-9]*\) .*/\1/p' "$log")
        report_launch "$name" "$start" "$log"
    fi
    for mode in auto shm; do
        name="resources comm_limit p=2 $mode"
        begin_case "$name" || continue
        forced=()
        [ "$mode" = auto ] || forced=(XCHG_ALLTOALL=shm XCHG_ALLGATHER=shm XCHG_ALLTOALLV=shm)
        preloaded "$log" 2 XCHG_WAIT=yield "${forced[@]}" -- "$TESTS/comm_limit" 5000
        check_launch $? "$log" comm_limit
        held=$(sed -n 's/^comm_limit: held \([0-9]*\) .*/\1/p' "$log")
        if [ "$outcome" = pass ] && { [ -z "$held" ] || [ -z "${native_held:-}" ] ||
            [ "$held" -lt $((native_held - 2)) ]; }; then
            outcome=fail
            why="held ${held:-?} communicators under xchg, ${native_held:-?} natively (at most 2 fewer allowed)"
        fi
        report_launch "$name" "$start" "$log"
    done
    name="resources comm_limit p=4 30 orders (more groups than channels)"
    if begin_case "$name"; then
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_VERBOSE=1 -- "$TESTS/comm_limit" 30 orders
        check_launch $? "$log" comm_limit
        channels=$(sed -n 's/^xchg: at MPI_Finalize this process holds \([0-9]*\) private.*/\1/p' "$log")
        if [ "$outcome" = pass ] && ! grep -aq "could not be made: the MPI library serves it" "$log"; then
            outcome=fail
            why="no communicator went past the channels' limit (no 'could not be made' line)"
        fi
        report_launch "$name" "$start" "$log"
    fi
fi
#  - the world's channel kept: bench/comm_cycle makes and frees 200 duplicates of MPI_COMM_WORLD
#    with 3 calls of MPI_Alltoall each (every byte checked); the channel of the world's group
#    stays idle between them (shim/channel.c), so rank 0 must have made one channel in all, as
#    the verbose line at MPI_Finalize counts them (without the idle channel: 200); and on this
#    one node each of the 400 duplicates must have attached through the world's board (the same
#    line), not an allreduce of its own.
comm_cycle_prog=$build_dir/bench/comm_cycle
if [ -x "$comm_cycle_prog" ]; then
    name="resources comm_cycle p=2 (duplicates of the world share one channel over time)"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_VERBOSE=1 -- "$comm_cycle_prog" 200 3 16
        rc=$?
        made=$(sed -n 's/^xchg: at MPI_Finalize this process holds [0-9]* private channels .* of \([0-9]*\) it made;.*/\1/p' "$log")
        boarded=$(sed -n "s/^xchg: at MPI_Finalize .*; \([0-9]*\) communicators attached through the world's board$/\1/p" "$log")
        if [ "$rc" -ne 0 ]; then
            why=$(rc_reason "$rc")
        elif ! grep -aq '^comm_cycle: 2 ranks, 200 communicators, .* 0 wrong bytes$' "$log"; then
            why="no 'comm_cycle: ... 0 wrong bytes' line"
        elif [ "${made:-x}" != 1 ]; then
            why="rank 0 made ${made:-no count of} channels for 400 duplicates of the world, expected 1"
        elif ! [ "${boarded:-0}" -ge 400 ] 2>/dev/null; then
            why="rank 0 attached ${boarded:-no count of} of 400 duplicates of the world through the board"
        else
            why=""
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    fi
else
    fail "resources comm_cycle" "$comm_cycle_prog is not built (make MPI=$MPI all)"
fi
#  - the program's malloc left as it was: malloc_mapped makes calls that have xchg use large
#    buffers of its own (strided MPI_Alltoall of 256 KiB and 1 MiB blocks, which it packs), then
#    requires a malloc of 160 KiB to be mapped by glibc, as natively: a library that frees a
#    large chunk of malloc's raises glibc's mmap threshold and moves the program's large buffers
#    onto the heap. Natively first; then auto, and forced shm, pairwise and node (2,1) at 3 ranks.
if [ -x "$TESTS/malloc_mapped" ]; then
    name="resources malloc_mapped p=3 native"
    if begin_case "$name"; then
        native "$log" 3 -- "$TESTS/malloc_mapped"
        check_launch $? "$log" malloc_mapped
        report_launch "$name" "$start" "$log"
    fi
    for mode in auto shm pairwise node; do
        name="resources malloc_mapped p=3 $mode"
        begin_case "$name" || continue
        forced=()
        [ "$mode" = auto ] || forced=(XCHG_ALLTOALL=$mode)
        [ "$mode" = node ] && forced+=(XCHG_NODES=2,1)
        preloaded "$log" 3 XCHG_WAIT=yield "${forced[@]}" -- "$TESTS/malloc_mapped"
        check_launch $? "$log" malloc_mapped
        report_launch "$name" "$start" "$log"
    done
else
    fail "resources malloc_mapped" "$TESTS/malloc_mapped is not built"
fi
