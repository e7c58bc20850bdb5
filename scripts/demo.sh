#!/usr/bin/env bash
# make demo: what xchg does, in about a minute, on this machine (MPICH).
#  1. the schedule the radix index algorithm follows for 9 ranks (xchg-sched, no MPI);
#  2. the paper's integer radix sort, an ordinary MPI program, natively and under xchg, with
#     the decisions xchg made and its statistics;
#  3. native vs xchg side by side: median time per MPI_Alltoall call at 4 ranks (xchg-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build}
ranks=4
export XCHG_WAIT=${XCHG_WAIT:-auto}

echo "== 1. build/xchg-sched alltoall radix p=9 r=3 k=1"
"$build/xchg-sched" alltoall radix p=9 r=3 k=1

echo
echo "== 2. integer radix sort ([R] keys), $ranks ranks: native MPICH, then under xchg"
mpiexec.mpich -n $ranks "$build/apps/radix_sort" </dev/null
XCHG_VERBOSE=1 XCHG_STATS=1 scripts/xchgrun -n $ranks "$build/apps/radix_sort" </dev/null

echo
echo "== 3. MPI_Alltoall, $ranks ranks, median time per call (us): native vs xchg's choice"
mpiexec.mpich -n $ranks "$build/xchg-bench" --coll alltoall --algos native,auto,pairwise,radix:r=2 \
    --min-bytes 1 --max-bytes 64K --time-ms 50 </dev/null |
    awk -F, 'NR == 1 { printf "%10s  %-12s %-14s %12s\n", "bytes", "algorithm", "ran as", "median_us"; next }
             { printf "%10s  %-12s %-14s %12s\n", $6, $4, $5, $9 }'
