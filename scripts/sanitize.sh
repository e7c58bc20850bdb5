#!/usr/bin/env bash
# sanitize.sh: the MPI correctness programs with a sanitized xchg preloaded (make test-sanitize,
# mk/sanitize.mk, which builds what it needs first):
#   $B/asan/libxchg.so  -fsanitize=address,undefined   (B = build, build/openmpi)
#   $B/tsan/libxchg.so  -fsanitize=thread              (for threads_check)
#   build/sanitize/libkeep_modules.so                   dlclose that unloads nothing
# The programs and the MPI libraries are not instrumented: LD_PRELOAD lists gcc's sanitizer
# runtime first (libasan.so then libubsan.so, or libtsan.so), then libkeep_modules.so (so that
# the MPI libraries' modules keep their names in the reports at exit), then the library.
# Findings inside MPICH, UCX, Open MPI and hwloc are suppressed by library name
# (mk/sanitize/lsan.supp, tsan.supp); every other report fails its run. Options:
#   ASan  quarantine_size_mb=1 (comm_churn and soak measure VmRSS, which a larger quarantine
#         grows), detect_leaks=1 (the MPI libraries have no frame pointers, so a stack that
#         enters them ends there; lsan.supp says where that matters);
#   UBSan print_stacktrace=1 (any "runtime error:" fails the run);
#   UCX_MEM_EVENTS=no under MPICH: UCX's hooks on madvise crash ThreadSanitizer when a thread
#         exits (and are not needed on one node).
# Each run must exit 0, print its "PROG: N checks, 0 failed" line and no sanitizer report.
# One line per run, "PASS name (s)" or "FAIL name: why" with the log's tail, then "N passed,
# M failed"; logs in build/sanitize/logs. SANITIZE_MPIS (default: mpich openmpi);
# SANITIZE_ONLY=REGEX runs only the runs whose name ("MPI: PROGRAM p=N ...") matches.
set -uo pipefail
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
cd "$root" || exit 2

MPIS=${SANITIZE_MPIS:-mpich openmpi}
ONLY=${SANITIZE_ONLY:-}
LOGS=$root/build/sanitize/logs
KEEP=$root/build/sanitize/libkeep_modules.so
TIMEOUT=${SANITIZE_TIMEOUT:-300}
ASAN_RT=$(gcc -print-file-name=libasan.so)
UBSAN_RT=$(gcc -print-file-name=libubsan.so)
TSAN_RT=$(gcc -print-file-name=libtsan.so)
ASAN_OPTS="detect_leaks=1:quarantine_size_mb=1"
LSAN_OPTS="suppressions=$root/mk/sanitize/lsan.supp:print_suppressions=0"
UBSAN_OPTS="print_stacktrace=1"
# history_size=7: the most access history ThreadSanitizer keeps, so that the stack of an earlier
# write made inside an MPI library (Open MPI's progress in one thread completing another
# thread's receive) is restored and its suppression matches; with the default a report under
# load came out as "failed to restore the stack", which no suppression can match
TSAN_OPTS="halt_on_error=0 history_size=7 suppressions=$root/mk/sanitize/tsan.supp"
NPROC=$(nproc)

for var in $(compgen -e); do
    case $var in XCHG_*) unset "$var" ;; esac
done
rm -rf "$LOGS"
mkdir -p "$LOGS"
npassed=0
nfailed=0

# launch MPI SANITIZER N VAR=VALUE... -- PROGRAM ARGS: the launcher's command with the
# sanitized library preloaded and the variables given to every rank.
launch() {
    local mpi=$1 kind=$2 n=$3 build preload vars=() opts=()
    shift 3
    build=build
    [ "$mpi" = openmpi ] && build=build/openmpi
    if [ "$kind" = tsan ]; then
        preload="$TSAN_RT:$KEEP:$root/$build/tsan/libxchg.so"
        vars+=("TSAN_OPTIONS=$TSAN_OPTS")
    else
        preload="$ASAN_RT:$UBSAN_RT:$KEEP:$root/$build/asan/libxchg.so"
        vars+=("ASAN_OPTIONS=$ASAN_OPTS" "LSAN_OPTIONS=$LSAN_OPTS" "UBSAN_OPTIONS=$UBSAN_OPTS")
    fi
    vars+=("LD_PRELOAD=$preload")
    [ "$mpi" = mpich ] && vars+=(UCX_MEM_EVENTS=no XCHG_WAIT=yield)
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    if [ "$mpi" = mpich ]; then
        for v in "${vars[@]}"; do opts+=(-genv "${v%%=*}" "${v#*=}"); done
        echo mpiexec.mpich -n "$n" "${opts[@]}" "$@"
        timeout -k 10 "$TIMEOUT" mpiexec.mpich -n "$n" "${opts[@]}" "$@"
    else
        [ "$(id -u)" -eq 0 ] && opts+=(--allow-run-as-root)
        [ "$n" -gt "$NPROC" ] && opts+=(--oversubscribe --mca mpi_yield_when_idle 1)
        for v in "${vars[@]}"; do opts+=(-x "$v"); done
        echo mpirun.openmpi -n "$n" "${opts[@]}" "$@"
        timeout -k 10 "$TIMEOUT" mpirun.openmpi -n "$n" "${opts[@]}" "$@"
    fi
}

# program_of ... -- PROGRAM ARGS: PROGRAM's name.
program_of() {
    while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
    basename "${2:-none}"
}

# run NAME MPI SANITIZER N VAR=VALUE... -- PROGRAM ARGS: one run and its verdict.
run() {
    local name="$2: $1" mpi=$2 prog log start rc why="" tests
    shift 2
    [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]] && return 0
    tests=$root/build/tests
    [ "$mpi" = openmpi ] && tests=$root/build/openmpi/tests
    prog=$(program_of "$@")
    log=$LOGS/$(echo "$name" | tr -c 'A-Za-z0-9=.,:_-' '_' | cut -c1-150).log
    start=$(date +%s.%N)
    launch "$mpi" "$@" </dev/null >"$log" 2>&1
    rc=$?
    if [ ! -x "$tests/$prog" ]; then
        why="$tests/$prog is not built"
    elif grep -aqE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer' "$log"; then
        why="a sanitizer report: $(grep -aE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer|SUMMARY: ' "$log" | head -n 2 | tr '\n' ' ')"
    elif [ $rc -ne 0 ]; then
        why="exit status $rc"
    elif ! grep -aqE "^$prog: [0-9]+ checks, 0 failed" "$log"; then
        why="no '$prog: N checks, 0 failed' line"
    fi
    if [ -z "$why" ]; then
        npassed=$((npassed + 1))
        echo "PASS $name ($(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s)"
    else
        nfailed=$((nfailed + 1))
        echo "FAIL $name: $why"
        echo "    log: $log (last lines below)"
        grep -av '^mpi' "$log" | tail -n 20 | sed 's/^/    | /'
    fi
}

forced() { # A2A AG V: the variables forcing the three collectives, strictly
    echo XCHG_STRICT=1 "XCHG_ALLTOALL=$1" "XCHG_ALLGATHER=$2" "XCHG_ALLTOALLV=$3"
}

start_all=$(date +%s.%N)
for mpi in $MPIS; do
    t=$root/build/tests
    [ "$mpi" = openmpi ] && t=$root/build/openmpi/tests
    # shellcheck disable=SC2046
    {
        run "coll_check p=3 auto" "$mpi" asan 3 -- "$t/coll_check"
        run "coll_check p=2 radix circulant twophase" "$mpi" asan 2 $(forced radix circulant twophase) -- "$t/coll_check"
        run "coll_check p=3 pairwise:k=2 ring pairwise:k=2" "$mpi" asan 3 $(forced pairwise:k=2 ring pairwise:k=2) -- "$t/coll_check"
        run "coll_check p=4 hier:k=2 shm shm" "$mpi" asan 4 $(forced hier:k=2 shm shm) -- "$t/coll_check"
        run "alltoallv_workloads p=4 twophase" "$mpi" asan 4 $(forced auto auto twophase) -- "$t/alltoallv_workloads"
        [ "$mpi" = mpich ] && run "alltoallv_workloads p=3 hier" "$mpi" asan 3 $(forced auto auto hier) -- "$t/alltoallv_workloads"
        # MPICH only: 6374 communicators take a minute under ASan with Open MPI, whose own
        # communicator calls are slow there; soak makes and frees 100 on both
        # its private memory's bound raised for ASan's allocator (tests/mpi/comm_churn.c)
        [ "$mpi" = mpich ] && run "comm_churn p=2 auto" "$mpi" asan 2 -- "$t/comm_churn" --private-bound-kib 1024
        run "errors_length p=3 pairwise ring pairwise" "$mpi" asan 3 $(forced pairwise ring pairwise) -- "$t/errors_length"
        run "errors_length p=3 radix circulant twophase" "$mpi" asan 3 $(forced radix circulant twophase) -- "$t/errors_length"
        run "errors_length p=3 shm shm shm" "$mpi" asan 3 $(forced shm shm shm) -- "$t/errors_length"
        run "errors_alias p=3 pairwise ring pairwise" "$mpi" asan 3 $(forced pairwise ring pairwise) -- "$t/errors_alias"
        run "errors_alias p=3 radix circulant twophase" "$mpi" asan 3 $(forced radix circulant twophase) -- "$t/errors_alias"
        run "soak p=2 auto (3000 calls)" "$mpi" asan 2 -- "$t/soak" --calls 3000
        run "soak p=3 shm forced (1000 calls)" "$mpi" asan 3 $(forced shm shm shm) -- "$t/soak" --calls 1000
        run "threads_check p=2 multiple auto" "$mpi" tsan 2 XCHG_STATS=1 -- "$t/threads_check" --iterations 60
        run "threads_check p=2 multiple shm" "$mpi" tsan 2 $(forced shm shm shm) -- "$t/threads_check" --iterations 60
        run "threads_check p=2 serialized" "$mpi" tsan 2 -- "$t/threads_check" --level serialized --iterations 60
        run "threads_check p=2 funneled" "$mpi" tsan 2 -- "$t/threads_check" --level funneled --iterations 60
    }
done
echo "sanitize time: $(awk -v a="$start_all" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s (logs in $LOGS)"
echo "$npassed passed, $nfailed failed"
[ $nfailed -eq 0 ]
