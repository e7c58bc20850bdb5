#!/usr/bin/env bash
# hpcc.sh: a real, unmodified application under xchg (not part of make test).
#
# Debian's hpcc (HPC Challenge 1.5, linked to Open MPI) runs with 4 ranks and a small input
# (HPL N=1000 on a 2x2 grid, which makes the MPIFFT vector 65536 complex numbers), natively and
# under scripts/xchgrun --mpi=openmpi (build/openmpi/libxchg.so preloaded), in separate
# directories, with the same launcher options. Its MPIFFT kernel calls
# MPI_Alltoall a few hundred times. The script prints what each run's hpccoutf.txt reports for
# MPIFFT (overall Success, process count, vector size, FFT error, Gflop/s) side by side, the
# median Gflop/s of each side and their ratio (one line "hpcc.sh: MPIFFT_Gflops median
# native=X xchg=Y xchg/native=Z", which scripts/bench_apps.sh reads), and the library's
# XCHG_STATS lines: which algorithm served MPI_Alltoall. The xchg runs get XCHG_STATS=1 (for that
# check; it counts calls and adds their times) and otherwise the caller's environment.
#
# Usage: scripts/hpcc.sh [PAIRS]
#   PAIRS   native/xchg run pairs, alternating (default 3): Gflop/s is noisy on a shared
#           machine, so every run's figure is shown along with the best and the median.
# XCHG_* variables set in the environment reach the xchg runs (xchgrun passes them on), e.g.
#   XCHG_ALLTOALL=pairwise:k=1 scripts/hpcc.sh 1
# Output: build/openmpi/hpcc/{native,xchg}-N/{hpccinf.txt,hpccoutf.txt,hpcc.log}.
# Exit status: non-zero when a run fails, reports Success other than 1 or another process
# count than 4, when the xchg runs' FFT error differs from the native one (MPI_Alltoall only
# moves data, so the FFT must come out the same), or when no MPI_Alltoall went through xchg.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${1:-3}
ranks=4
build=build/openmpi
work=$build/hpcc

scripts/setup.sh openmpi hpcc
make --no-print-directory MPI=openmpi lib >/dev/null
lib=${XCHG_LIB:-$PWD/$build/libxchg.so} # XCHG_LIB: another library (scripts/bench_apps.sh --lib)

# Both modes: 4 ranks oversubscribed with yielding; as root, Open MPI needs --allow-run-as-root
# (xchgrun adds it itself).
options=(-n "$ranks" --oversubscribe --mca mpi_yield_when_idle 1)
native_launch=(mpirun.openmpi "${options[@]}")
[ "$(id -u)" -ne 0 ] || native_launch+=(--allow-run-as-root)
xchg_launch=(env XCHG_LIB="$lib" XCHG_STATS=1 "$PWD/scripts/xchgrun" --mpi=openmpi
    "${options[@]}")

# HPL-format input (HPCC reads hpccinf.txt from the working directory): one problem, N=1000,
# NB=80, a 2x2 process grid; lines 33-36 add nothing to PTRANS.
write_input() {
    cat >"$1" <<'EOF'
HPLinpack benchmark input file (xchg scripts/hpcc.sh: small, 4 ranks)
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
1000         Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
2            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200                            values of N
0                               number of additional blocking sizes for PTRANS
40                              values of NB
EOF
}

# run_hpcc DIR LAUNCHER...: one hpcc run in a fresh DIR.
run_hpcc() {
    local dir=$1
    shift
    rm -rf "$dir"
    mkdir -p "$dir"
    write_input "$dir/hpccinf.txt"
    if ! (cd "$dir" && timeout 600 "$@" hpcc </dev/null >hpcc.log 2>&1); then
        echo "hpcc.sh: hpcc failed in $dir; its output:" >&2
        tail -20 "$dir/hpcc.log" >&2
        exit 1
    fi
}

# summary DIR KEY: a KEY=VALUE line of hpccoutf.txt's summary section ("?" when missing).
summary() {
    local value
    value=$(sed -n "s/^$2=//p" "$1/hpccoutf.txt" 2>/dev/null | head -1)
    echo "${value:-?}"
}

echo "hpcc.sh: native:  ${native_launch[*]} hpcc"
echo "hpcc.sh: xchg:    ${xchg_launch[*]} hpcc"
for ((i = 1; i <= pairs; i++)); do
    echo "hpcc.sh: pair $i of $pairs"
    # odd pairs native first, even ones xchg first (neither side always in one place)
    if [ $((i % 2)) -eq 1 ]; then
        run_hpcc "$work/native-$i" "${native_launch[@]}"
        run_hpcc "$work/xchg-$i" "${xchg_launch[@]}"
    else
        run_hpcc "$work/xchg-$i" "${xchg_launch[@]}"
        run_hpcc "$work/native-$i" "${native_launch[@]}"
    fi
done

# The table: one column per mode, every run's figures.
status=0
declare -A row
keys=(Success CommWorldProcs MPIFFT_Procs MPIFFT_N MPIFFT_maxErr MPIFFT_Gflops)
for mode in native xchg; do
    best=0
    for key in "${keys[@]}"; do row[$mode,$key]=""; done
    for ((i = 1; i <= pairs; i++)); do
        dir=$work/$mode-$i
        for key in "${keys[@]}"; do row[$mode,$key]+="$(summary "$dir" "$key") "; done
        best=$(awk -v a="$best" -v b="$(summary "$dir" MPIFFT_Gflops)" \
            'BEGIN { print (b != "?" && b + 0 > a + 0) ? b : a }')
        [ "$(summary "$dir" Success)" = 1 ] || { echo "hpcc.sh: $dir: Success is not 1" >&2; status=1; }
        [ "$(summary "$dir" MPIFFT_Procs)" = "$ranks" ] ||
            { echo "hpcc.sh: $dir: MPIFFT_Procs is not $ranks" >&2; status=1; }
    done
    row[$mode,best]=$best
done
echo
printf '%-22s %-36s %s\n' "hpccoutf.txt" "native (runs 1..$pairs)" "xchg (runs 1..$pairs)"
for key in "${keys[@]}"; do
    printf '%-22s %-36s %s\n' "$key" "${row[native,$key]% }" "${row[xchg,$key]% }"
done
printf '%-22s %-36s %s\n' "MPIFFT_Gflops (best)" "${row[native,best]}" "${row[xchg,best]}"
# the median Gflop/s of each side (runs that gave no figure left out) and their ratio
median_gflops() { # MODE
    for ((i = 1; i <= pairs; i++)); do summary "$work/$1-$i" MPIFFT_Gflops; done | grep -v '^?$' |
        sort -g | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print "?" }'
}
native_median=$(median_gflops native)
xchg_median=$(median_gflops xchg)
echo "hpcc.sh: MPIFFT_Gflops median native=$native_median xchg=$xchg_median xchg/native=$(awk -v a="$native_median" -v b="$xchg_median" 'BEGIN { if (a + 0 > 0 && b != "?") printf "%.3f", b / a; else print "?" }')"

# MPI_Alltoall only moves data: the FFT error must be the same number in every run.
errors=$(for ((i = 1; i <= pairs; i++)); do
    summary "$work/native-$i" MPIFFT_maxErr
    summary "$work/xchg-$i" MPIFFT_maxErr
done | sort -u | wc -l)
if [ "$errors" -eq 1 ]; then
    echo "MPIFFT_maxErr: identical in all $((2 * pairs)) runs"
else
    echo "hpcc.sh: MPIFFT_maxErr differs between runs" >&2
    status=1
fi

echo
echo "xchg's report (run xchg-1, $work/xchg-1/hpcc.log):"
grep '^xchg:' "$work/xchg-1/hpcc.log" | sort -u || true
if ! grep -q '^xchg: alltoall ' "$work/xchg-1/hpcc.log"; then
    echo "hpcc.sh: no 'xchg: alltoall' statistics line: MPI_Alltoall did not go through xchg" >&2
    status=1
fi
exit $status
