#!/usr/bin/env bash
# demo.sh: `make demo`: what xchg does, in about a minute, on this machine, with the figures a
# user of it would see. MPI=mpich (default) or openmpi, BUILD the build folder (make passes
# both).
#
# Every comparison runs P ranks with P at most the processing units (nproc, at most 8): one
# rank per core, as jobs run. Native is the MPI library alone, launched without xchg in a
# process of its own (not native forced through xchg); xchg is the library preloaded by
# xchgrun with the defaults a user gets (the caller's XCHG_* variables are unset). Times count
# from a program's first call.
#  1. a schedule: the radix index algorithm for 9 ranks (xchg-sched, no MPI);
#  2. correctness: tests/mpi/coll_check under xchg (every byte checked), with XCHG_STATS=1;
#  3. what xchg chose: the integer radix sort under xchg with XCHG_VERBOSE=1;
#  4. the radix sort side by side, native and under xchg, for two sizes: the first sort of a
#     fresh process (the median over launches, native and xchg alternating) and the median
#     sort of one process that sorts 30 times;
#  5. per call, when the build has the measuring harness of bench/ ($BUILD/bench/harness, a
#     plain MPI program): the median of the first calls of each shape and of many calls;
#  6. where to go next.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
MPI=${MPI:-mpich}
build=${BUILD:-build}
case $build in /*) ;; *) build=$root/$build ;; esac
for var in $(compgen -e); do
    case $var in XCHG_*) unset "$var" ;; esac
done
export XCHG_LIB=$build/libxchg.so # this build's library, whatever xchgrun would find
launches=7                        # fresh processes per side for the first sort
sorts=30                          # sorts in one process for the settled figure

shown=${build#"$root"/} # the build folder as the lines below name it

cores=$(nproc)
ranks=$((cores < 8 ? cores : 8))

# native N PROGRAM ARGS: the MPI library alone; xchg N PROGRAM ARGS: preloaded by xchgrun.
native() {
    local n=$1
    shift
    if [ "$MPI" = openmpi ]; then
        local opts=()
        [ "$(id -u)" -eq 0 ] && opts+=(--allow-run-as-root)
        timeout 120 mpirun.openmpi "${opts[@]}" -n "$n" "$@" </dev/null
    else
        timeout 120 mpiexec.mpich -n "$n" "$@" </dev/null
    fi
}
xchg() {
    local n=$1
    shift
    timeout 120 scripts/xchgrun --mpi="$MPI" -n "$n" "$@" </dev/null
}

# The sort's time in seconds from radix_sort's output ("... time=T s ... median M s)"),
# the median when asked; the program must also say OK.
sort_time() { # OUTPUT [median]
    grep -q '^radix_sort: OK' <<<"$1" || {
        echo "demo.sh: the radix sort failed: $1" >&2
        exit 1
    }
    if [ "${2:-}" = median ]; then
        sed -n 's/.*median \([0-9.]*\) s.*/\1/p' <<<"$1"
    else
        sed -n 's/.* time=\([0-9.]*\) s.*/\1/p' <<<"$1"
    fi
}

median() { # VALUES...
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# One table row: SIZE WHAT NATIVE_S XCHG_S
sort_row() {
    awk -v n="$1" -v what="$2" -v a="$3" -v b="$4" \
        'BEGIN { printf "  %9s  %-36s %9.3f ms %9.3f ms %8.2f\n", n, what, a * 1e3, b * 1e3, b / a }'
}

echo "== xchg $(scripts/xchgrun --version | cut -d' ' -f2) on $MPI, $cores processing units: $ranks ranks, one per core"
echo "   Native is the MPI library alone, in a process of its own; xchg is the library preloaded"
echo "   (scripts/xchgrun) with the defaults. Times count from a program's first call."
[ "$ranks" -ge 2 ] || echo "   (one core: one rank, where every collective is a local copy; figures say little)"
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l >= c / 2) }'; then
    echo "   This machine is busy (load average $load on $cores cores): other work slows both sides,"
    echo "   unevenly, and the times below show it. Run again when the machine is idle."
fi

echo
echo "== 1. A schedule, no MPI: $shown/xchg-sched alltoall radix p=9 r=3 k=1 show=rank0"
echo "   (Bruck et al.'s radix index algorithm: the blocks whose digit is d go d * r^i ranks on)"
"$build/xchg-sched" alltoall radix p=9 r=3 k=1 show=rank0

echo
echo "== 2. Correct: coll_check under xchg, $ranks ranks (every received byte and the gaps checked)"
XCHG_STATS=1 xchg "$ranks" "$build/tests/coll_check" 2>&1 | grep -E '^coll_check: |^xchg: ' |
    sed 's/^xchg: /   served by: /'

echo
echo "== 3. What xchg chose: the integer radix sort (Bader, Helman and JaJa) under xchg, XCHG_VERBOSE=1"
XCHG_VERBOSE=1 xchg "$ranks" "$build/apps/radix_sort" -n 4096 -i 3 2>&1 | grep -E '^xchg' | head -n 12

echo
echo "== 4. The radix sort, native and under xchg: $ranks ranks on $cores cores, each launch a new process"
printf '  %9s  %-36s %12s %12s %8s\n' keys/rank "" native xchg xchg/nat
for keys in 4096 65536; do
    first_native=() first_xchg=()
    for ((i = 0; i < launches; i++)); do
        first_native+=("$(sort_time "$(native "$ranks" "$build/apps/radix_sort" -n $keys -i 1)")")
        first_xchg+=("$(sort_time "$(xchg "$ranks" "$build/apps/radix_sort" -n $keys -i 1)")")
    done
    sort_row $keys "first sort of a process (median of $launches)" \
        "$(median "${first_native[@]}")" "$(median "${first_xchg[@]}")"
    sort_row $keys "median of $sorts sorts in one process" \
        "$(sort_time "$(native "$ranks" "$build/apps/radix_sort" -n $keys -i $sorts)" median)" \
        "$(sort_time "$(xchg "$ranks" "$build/apps/radix_sort" -n $keys -i $sorts)" median)"
done
echo "   A process's first calls carry xchg's setup (its communicator, shared segments, the calls"
echo "   that learning times); other work on this machine moves these figures from run to run."

harness=$build/bench/harness
if [ -x "$harness" ]; then
    echo
    echo "== 5. Per call, $ranks ranks: median time (us) of the first 20 calls of a shape, and of 300"
    args=(--sizes "16,4K" --colls "alltoall,allgather,alltoallv" --short-warmup 0
        --short-calls 20 --steady-calls 300)
    native_csv=$(native "$ranks" "$harness" "${args[@]}")
    xchg_csv=$(xchg "$ranks" "$harness" "${args[@]}" 2>/dev/null)
    header="mode,collective,workload,bytes,ranks,median_us,min_us,calls"
    if [ "$(head -n 1 <<<"$native_csv")" = "$header" ] && [ "$(head -n 1 <<<"$xchg_csv")" = "$header" ]; then
        printf '  %-6s %-10s %7s %12s %12s %8s\n' calls collective bytes native xchg xchg/nat
        awk -F, 'FNR == 1 { next } NR == FNR { t[$1 "," $2 "," $4] = $6; next }
                 { k = $1 "," $2 "," $4
                   printf "  %-6s %-10s %7s %12.2f %12.2f %8.2f\n", ($1 == "short" ? "first" : "all"),
                          $2, $4, t[k], $6, $6 / t[k] }' <(echo "$native_csv") <(echo "$xchg_csv")
    else
        echo "   ($harness printed no CSV this script knows: skipped)"
    fi
fi

echo
echo "== Next"
mpi_option=""
[ "$MPI" = openmpi ] && mpi_option=" --mpi=openmpi"
echo "   Your program:    scripts/xchgrun$mpi_option -n N ./program (installed: make install, docs/install.md)"
echo "   Your machine:    scripts/compare.sh --mpi $MPI -n N (native against xchg, per call)"
launcher=mpiexec.mpich
[ "$MPI" = openmpi ] && launcher=mpirun.openmpi
echo "   A tuning table:  $launcher -n N $shown/xchg-tune -o table.txt; then XCHG_TUNING=table.txt"
echo "   What it does:    XCHG_VERBOSE=1 and XCHG_STATS=1 (README.md, Environment); make test"
