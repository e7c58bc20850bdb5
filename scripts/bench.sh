#!/usr/bin/env bash
# make bench: the default benchmark sweep of this machine, with plots.
#
#   1. xchg-tune --verify --quick at the largest rank count writes $BUILD/bench/table.txt
#      (measured beta, tau, rho, port_share; per cell the measured best of the model's best
#      candidates and native), and scripts/plot_table.sh draws it as table.png;
#   2. a short xchg-bench --check pass (every byte of every iteration checked, small blocks);
#   3. xchg-bench at each rank count, every algorithm and parameter variant, native, and auto
#      with XCHG_TUNING=table.txt, blocks from 1 B to 1 MiB: bench_<ranks>.csv;
#   4. scripts/plot.sh draws time_<collective>_<ranks>ranks.png and writes summary.txt
#      (auto against native against the best forced algorithm).
#
# Environment (the Makefile gives MPI and BUILD):
#   MPI=mpich|openmpi   BUILD=build           where the tools are and where bench/ goes
#   BENCH_RANKS="2 4 8" BENCH_MAX_BYTES=1M    BENCH_TIME_MS=30 (time budget per CSV line)
# With more ranks than cores the tools wait with MPI_Test + sched_yield (XCHG_WAIT=yield).
# About 5 to 10 minutes on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
MPI=${MPI:-mpich}
BUILD=${BUILD:-build}
ranks_list=${BENCH_RANKS:-"2 4 8"}
max_bytes=${BENCH_MAX_BYTES:-1M}
time_ms=${BENCH_TIME_MS:-30}
out=$BUILD/bench

scripts/setup.sh "$MPI" gnuplot-nox
for tool in xchg-tune xchg-bench; do
    [ -x "$BUILD/$tool" ] || { echo "bench.sh: $BUILD/$tool is missing (run make first)" >&2; exit 1; }
done
mkdir -p "$out"
cores=$(nproc)

# run N PROGRAM ARGS...: the MPI's launcher, yielding when ranks exceed cores
run() {
    local n=$1
    shift
    local wait=auto
    [ "$n" -gt "$cores" ] && wait=yield
    if [ "$MPI" = openmpi ]; then
        local root=()
        [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
        XCHG_WAIT=$wait mpiexec.openmpi "${root[@]}" --oversubscribe --mca mpi_yield_when_idle 1 \
            -x XCHG_WAIT -x XCHG_TUNING -n "$n" "$@" </dev/null
    else
        XCHG_WAIT=$wait mpiexec.mpich -n "$n" "$@" </dev/null
    fi
}

largest=0
for n in $ranks_list; do [ "$n" -gt "$largest" ] && largest=$n; done
start=$(date +%s)

echo "== bench: tuning table at $largest ranks ($out/table.txt)"
export XCHG_TUNING=""
run "$largest" "$BUILD/xchg-tune" --verify --quick -o "$out/table.txt" | tee "$out/tune.txt"
scripts/plot_table.sh "$out/table.txt" "$out/table.png" "2-$largest" 1048576

echo "== bench: data check (xchg-bench --check, 4 ranks, blocks up to 4 KiB)"
run 4 "$BUILD/xchg-bench" --check --max-bytes 4K --time-ms 1 --min-iters 2 -o "$out/check.csv"

export XCHG_TUNING=$out/table.txt
csvs=()
for n in $ranks_list; do
    echo "== bench: $n ranks ($out/bench_$n.csv)"
    run "$n" "$BUILD/xchg-bench" --max-bytes "$max_bytes" --time-ms "$time_ms" -o "$out/bench_$n.csv"
    csvs+=("$out/bench_$n.csv")
done

scripts/plot.sh "$out" "${csvs[@]}"
echo "== bench: done in $(($(date +%s) - start)) s; CSV, PNG and summary.txt in $out"
