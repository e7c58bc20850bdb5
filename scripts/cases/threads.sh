# shellcheck shell=bash
# threads.sh: the collectives from several threads (tests/mpi/threads_check.c; sourced by
# run_tests.sh, which provides begin_case, preloaded, check_launch, report_launch, $TESTS and
# $LOGS). Every byte is checked; a deadlock ends the program (its watchdog) or the launch (the
# time limit, THREADS_TIMEOUT s here).
#   - MPI_THREAD_MULTIPLE, 4 threads, each on its own communicator (dups and splits, and a dup
#     made and freed in each thread every 100 iterations), learning on: 2 ranks, THREADS_ITER
#     iterations; the same with every collective forced to shm (a shared segment per
#     communicator, made from several threads at once); 3 ranks under a tuning table that
#     names radix, pairwise:k=2, circulant, ring, pairwise and twophase by size, fewer
#     iterations (12 threads on 2 cores);
#   - MPI_THREAD_SERIALIZED (threads taking turns on one communicator) and MPI_THREAD_FUNNELED
#     (the main thread calls, the others fill and check), 2 ranks;
#   - ranks with different thread levels (thread_levels, below).
# Where the MPI library does not provide the level, the program says so and the case is
# skipped (MPICH 4.0.2 and Open MPI 4.1.4 as packaged by Debian provide all three).

THREADS_ITER=1000
THREADS_TIMEOUT=170

# threads_case NAME RANKS LEVEL ITERATIONS [VAR=VALUE...]
threads_case() {
    local name=$1 n=$2 level=$3 iterations=$4 coll expect=()
    shift 4
    begin_case "$name" || return 0
    for coll in alltoall allgather alltoallv; do
        [[ " $* " == *" XCHG_${coll^^}=shm "* ]] && expect+=("$coll=shm")
    done
    TIMEOUT=$THREADS_TIMEOUT preloaded "$log" "$n" XCHG_WAIT=yield XCHG_STATS=1 "$@" -- \
        "$TESTS/threads_check" --level "$level" --iterations "$iterations"
    check_launch $? "$log" threads_check "${expect[@]}"
    report_launch "$name" "$start" "$log"
}

if [ -x "$TESTS/threads_check" ]; then
    threads_table=$LOGS/threads.table
    printf '%s\n' 'xchg-tuning 1' '# threads.sh: an algorithm for every call, by size' \
        'alltoall * 0-255 radix:r=2' 'alltoall * 256-* pairwise:k=2' \
        'allgather * 0-1023 circulant' 'allgather * 1024-* ring' \
        'alltoallv * 0-63 pairwise' 'alltoallv * 64-* twophase' >"$threads_table"

    threads_case "threads_check p=2 multiple auto" 2 multiple "$THREADS_ITER"
    threads_case "threads_check p=2 multiple shm forced" 2 multiple "$THREADS_ITER" \
        XCHG_STRICT=1 XCHG_ALLTOALL=shm XCHG_ALLGATHER=shm XCHG_ALLTOALLV=shm
    threads_case "threads_check p=3 multiple XCHG_TUNING (every call named)" 3 multiple \
        $((THREADS_ITER / 5)) XCHG_TUNING="$threads_table"
    threads_case "threads_check p=2 serialized auto" 2 serialized "$THREADS_ITER"
    threads_case "threads_check p=2 funneled auto" 2 funneled "$THREADS_ITER"
else
    fail "threads_check" "$TESTS/threads_check is not built"
fi

# Processes that ask for different thread levels (tests/mpi/thread_levels.c: world rank 0
# MPI_THREAD_MULTIPLE, the others MPI_THREAD_SINGLE), learning on, two duplicates of the world:
# the level is agreed at MPI_Init, so every rank keeps its learning state alike (before, the job
# hung) and all or none make the warm-up's duplicate.
name="thread_levels p=3 (rank 0 multiple, the others single; learning on two duplicates)"
if [ ! -x "$TESTS/thread_levels" ]; then
    fail "$name" "$TESTS/thread_levels is not built"
elif begin_case "$name"; then
    TIMEOUT=$THREADS_TIMEOUT preloaded "$log" 3 XCHG_WAIT=yield XCHG_STATS=1 -- "$TESTS/thread_levels"
    check_launch $? "$log" thread_levels
    report_launch "$name" "$start" "$log"
fi
