#!/usr/bin/env bash
# compare.sh: xchg's auto against the MPI library's native collective, side by side, for one MPI
# and one rank count: the comparison that the performance bars are judged by.
#
#   scripts/compare.sh --mpi mpich -n 2
#   scripts/compare.sh --mpi openmpi -n 8 --table build/bench/table.txt --full
#
# Per repetition (--repeat), two xchg-bench runs (native and auto forced in-process; both timed
# at one block size before the next, in --rounds turns each that alternate, native, auto,
# native, auto, ..., so that load drifting over seconds hits both alike):
#   1. alltoall, allgather and alltoallv with uniform counts;
#   2. alltoallv skewed: --workload hrel:h=H with H = max(2, ranks/2) (the Bader-Helman-JaJa
#      h-relation, tuning/workloads.h): from 4 ranks up only ranks 0, 1 and 2 receive, a half,
#      a third and a sixth of all the data (rank 0 gets ranks/2 times its fair share); at 2
#      ranks everything goes to rank 0. --skew SPEC picks another.
# Blocks: 1 B, 16 B, 256 B, 4 KiB, 64 KiB (--full: every power of two from 1 B to 64 KiB); for
# alltoallv the mean block (every rank sends ranks x block bytes in all).
#
# Timing is xchg-bench's: --warmup untimed calls per (spec, block) first (auto may learn from the
# first calls of a shape: the medians are of its settled choice), then each iteration after a
# barrier, counting the slowest rank's time; a turn's median over its iterations, a line's the
# median over its turns.
#
# Prints a table (collective, block, native and auto median in us, auto/native, what auto ran:
# xchg-bench's params column) and then the geometric mean and the worst cell of the ratios.
# Writes DIR/<mpi>-<N>ranks.csv with the columns
#     mpi,ranks,collective,workload,bytes,native_us,auto_us,ratio,auto_params[,control_us,control]
# --control times native a second time in every job, as a third line in the same alternation
# (native, auto, native again: xchg-bench's native#2), and adds its median and its ratio to the
# first native line per cell, and their geometric mean and worst cell: how far two lines of the
# same collective differ in this run, the resolution of the auto/native figures beside them.
# and keeps xchg-bench's own CSVs beside it (<mpi>-<N>ranks-uniform.csv, ...-skewed.csv).
#
# Options:
#   --mpi mpich|openmpi  the build to use: build/ or build/openmpi (default mpich)
#   -n N                 ranks (default 2)
#   --full               every power of two from 1 B to 64 KiB
#   --control            native twice per job: the run's own noise (above)
#   --table FILE         XCHG_TUNING=FILE for auto (default: XCHG_TUNING as in the environment)
#   --skew SPEC          the skewed alltoallv workload (default hrel:h=max(2, N/2))
#   --warmup N           untimed calls before each line (default 40: a trial of four
#                        candidates and its confirmation take 36 calls)
#   --time-ms MS         time budget per line (default 200; at least 10 iterations)
#   --rounds R           turns per line, native's and auto's alternating (default 5)
#   --repeat R           R jobs one after the other (default 3); each cell is the median over them
#                        of native's and of auto's median (adjacent lines of one job differ by
#                        10 % and more with more ranks than cores)
#   -o DIR               where the CSVs go (default build/compare)
# With more ranks than cores Open MPI runs with --oversubscribe --mca mpi_yield_when_idle 1, and
# xchg waits as its XCHG_WAIT=auto decides (it yields where the MPI library's own wait would not). Other XCHG_* variables (XCHG_LEARN, ...)
# are passed to the ranks as set.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}

mpi=mpich
ranks=2
full=0
control=0
skew=""
warmup=40
repeat=3
rounds=5
time_ms=200
outdir=build/compare
while [ $# -gt 0 ]; do
    case "$1" in
    --mpi) mpi=${2:?--mpi needs mpich or openmpi}; shift 2 ;;
    -n) ranks=${2:?-n needs a number}; shift 2 ;;
    --full) full=1; shift ;;
    --control) control=1; shift ;;
    --table) export XCHG_TUNING=${2:?--table needs a file}; shift 2 ;;
    --skew) skew=${2:?--skew needs a workload spec}; shift 2 ;;
    --warmup) warmup=${2:?--warmup needs a number}; shift 2 ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    --time-ms) time_ms=${2:?--time-ms needs a number}; shift 2 ;;
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    -o) outdir=${2:?-o needs a directory}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "compare.sh: unknown option '$1' (--help lists them)" >&2; exit 2 ;;
    esac
done
case "$ranks" in '' | *[!0-9]*) echo "compare.sh: -n '$ranks' is not a number" >&2; exit 2 ;; esac
[ "$ranks" -ge 1 ] || { echo "compare.sh: -n must be at least 1" >&2; exit 2; }
case "$mpi" in
mpich) bench=build/xchg-bench; make_hint="make" ;;
openmpi) bench=build/openmpi/xchg-bench; make_hint="make MPI=openmpi" ;;
*) echo "compare.sh: --mpi must be mpich or openmpi, not '$mpi'" >&2; exit 2 ;;
esac
[ -x "$bench" ] || { echo "compare.sh: $bench is missing (run '$make_hint' first)" >&2; exit 1; }
if [ -n "${XCHG_TUNING:-}" ] && [ ! -r "$XCHG_TUNING" ]; then
    echo "compare.sh: cannot read the tuning table $XCHG_TUNING" >&2
    exit 1
fi
[ -n "$skew" ] || skew="hrel:h=$((ranks / 2 > 2 ? ranks / 2 : 2))"
if [ "$full" = 1 ]; then
    sizes=(--min-bytes 1 --max-bytes 64K)
else
    sizes=(--sizes 1,16,256,4K,64K)
fi
mkdir -p "$outdir"
base="$outdir/$mpi-${ranks}ranks"

# launch PROGRAM ARGS... on $ranks ranks with the chosen MPI
cores=$(nproc)
launch() {
    if [ "$mpi" = openmpi ]; then
        local extra=() var
        [ "$(id -u)" -eq 0 ] && extra+=(--allow-run-as-root)
        [ "$ranks" -gt "$cores" ] && extra+=(--oversubscribe --mca mpi_yield_when_idle 1)
        for var in $(compgen -e | grep '^XCHG_' || true); do
            extra+=(-x "$var")
        done
        mpirun.openmpi "${extra[@]}" -n "$ranks" "$@" </dev/null
    else
        mpiexec.mpich -n "$ranks" "$@" </dev/null
    fi
}

algos=native,auto
[ "$control" -eq 1 ] && algos=native,auto,native
common=(--algos "$algos" "${sizes[@]}" --warmup "$warmup" --time-ms "$time_ms" --min-iters 10
    --rounds "$rounds")
echo "== compare: $mpi, $ranks ranks, table ${XCHG_TUNING:-none (built-in models)}," \
    "XCHG_LEARN=${XCHG_LEARN:-default}, skewed alltoallv: $skew, $rounds turns per line"
uniform_csvs=() skewed_csvs=()
for ((r = 1; r <= repeat; r++)); do
    launch "$bench" --coll alltoall,allgather,alltoallv "${common[@]}" -o "$base-uniform-$r.csv"
    launch "$bench" --coll alltoallv --workload "$skew" "${common[@]}" -o "$base-skewed-$r.csv"
    uniform_csvs+=("$base-uniform-$r.csv")
    skewed_csvs+=("$base-skewed-$r.csv")
done

# native and auto of each (collective, workload, block) on one line, in the order measured: the
# median over the repeated jobs of each side's median (what auto ran: as in the last job)
awk -F, -v skew="$skew" -v control_on="$control" '
    function median(list, count,    i, j, v, a) {
        for (i = 1; i <= count; i++) a[i] = list[i]
        for (i = 2; i <= count; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { v = a[j]; a[j] = a[j - 1]; a[j - 1] = v }
        return count % 2 ? a[(count + 1) / 2] : (a[count / 2] + a[count / 2 + 1]) / 2
    }
    FNR == 1 { workload = FILENAME ~ /-skewed-[0-9]+\.csv$/ ? skew : "uniform"; next }
    NF >= 10 && ($4 == "native" || $4 == "auto" || $4 == "native#2") {
        key = $3 SUBSEP workload SUBSEP $6
        if (!(key in head)) {
            order[n++] = key
            head[key] = $1 "," $2 "," $3 "," workload "," $6
        }
        if ($4 == "native") {
            nn[key]++
            native[key, nn[key]] = $9
        } else if ($4 == "native#2") {
            nc[key]++
            control[key, nc[key]] = $9
        } else {
            na[key]++
            autot[key, na[key]] = $9
            params[key] = $5
        }
    }
    END {
        printf "mpi,ranks,collective,workload,bytes,native_us,auto_us,ratio,auto_params%s\n",
            control_on ? ",control_us,control" : ""
        for (i = 0; i < n; i++) {
            k = order[i]
            if (!(k in nn) || !(k in na) || (control_on && !(k in nc))) continue
            delete l1; delete l2; delete l3
            for (j = 1; j <= nn[k]; j++) l1[j] = native[k, j]
            for (j = 1; j <= na[k]; j++) l2[j] = autot[k, j]
            nat = median(l1, nn[k]); aut = median(l2, na[k])
            if (nat <= 0) continue
            printf "%s,%.3f,%.3f,%.5g,%s", head[k], nat, aut, aut / nat, params[k]
            if (control_on) {
                for (j = 1; j <= nc[k]; j++) l3[j] = control[k, j]
                con = median(l3, nc[k])
                printf ",%.3f,%.5g", con, con / nat
            }
            printf "\n"
        }
    }' "${uniform_csvs[@]}" "${skewed_csvs[@]}" >"$base.csv"

# the table, the geometric mean and the worst cell
awk -F, '
    function human(b) {
        if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
        if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
        return b " B"
    }
    NR == 1 { next }
    {
        name = $4 == "uniform" ? $3 : $3 " " $4
        if (cells == 0)
            printf "%-24s %8s %12s %12s %12s%s  %s\n", "collective", "block", "native us", "auto us",
                "auto/native", (NF >= 11 ? "  native again" : ""), "auto ran"
        printf "%-24s %8s %12.2f %12.2f %12.3f", name, human($5), $6, $7, $8
        if (NF >= 11) {
            printf "  %13.3f", $11
            clog += log($11)
            if (cells == 0 || $11 > cworst) {
                cworst = $11
                cworst_cell = name " " human($5)
            }
        }
        printf "  %s\n", $9
        cells++
        logsum += log($8)
        faster += $8 < 1
        if (cells == 1 || $8 > worst) {
            worst = $8
            worst_cell = name " " human($5) " (auto ran " $9 ")"
        }
    }
    END {
        if (cells == 0) {
            print "compare.sh: no cells measured" >"/dev/stderr"
            exit 1
        }
        printf "geometric mean of auto/native over %d cells: %.3f (auto faster in %d)\n", cells,
            exp(logsum / cells), faster
        printf "worst cell: %s: %.3f\n", worst_cell, worst
        if (cworst_cell != "")
            printf "control, native again/native: geometric mean %.3f, worst cell %s: %.3f\n",
                exp(clog / cells), cworst_cell, cworst
    }' "$base.csv"
echo "== compare: $base.csv (xchg-bench output: ${uniform_csvs[*]} ${skewed_csvs[*]})"
