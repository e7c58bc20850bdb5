#!/usr/bin/env bash
# compare.sh: xchg against the MPI library's own collectives, measured as users run them: the
# plain MPI program bench/harness.c ($BUILD/bench/harness) natively in one process and with the
# library preloaded in another, each counting from its first call.
#
#   scripts/compare.sh --mpi mpich -n 2
#   scripts/compare.sh --mpi openmpi -n 8 --table build/bench/table.txt --full
#   scripts/compare.sh --mpi openmpi --cluster 3,2,2,1 --rate 100mbit
#
# Per repetition (--repeat), alternating: one native run (the harness under the MPI's launcher,
# no LD_PRELOAD, no XCHG_* variable), one xchg run (the same launch through scripts/xchgrun,
# which preloads $BUILD/libxchg.so, with the environment a user gets: every XCHG_* variable of
# the caller's environment is unset, only those given with --env or --table are set), and with
# --control a second native run; each repetition starts one role later than the one before, so
# that every side runs in every position. Both sides get the same launcher options: Open MPI
# with more ranks than cores runs with --oversubscribe --mca mpi_yield_when_idle 1 on both.
#
# The harness (bench/harness.c has the details) runs two modes, each cell on a communicator of
# its own so that its shape is new to the process when its first call starts:
#   short   2 untimed calls, then 15 timed: the median of the 15 (learning included);
#   steady  300 timed calls: the median;
# cells alltoall, allgather, alltoallv with uniform counts and alltoallv with skewed counts
# (the h-relation with h = max(2, ranks/2): from 4 ranks up ranks 0, 1 and 2 receive a half,
# a third and a sixth of all data; at 2 ranks rank 0 receives everything), blocks 1 B, 16 B,
# 256 B, 4 KiB and 64 KiB (--full: every power of two up to 64 KiB; for alltoallv the mean
# block). One call's time is the slowest rank's, after a barrier. The harness checks every
# received byte of each cell's first and last call; a run that exits non-zero stops the script.
#
# Each cell's figure is the median over the repetitions of the per-run medians. Printed per mode
# (short, steady): collective, workload, bytes, native us, xchg us, xchg/native, then the
# geometric mean and the worst cell of the ratios; with --control also native again/native per
# cell and its geometric mean and worst cell: the resolution of the run (how far two native
# runs differ), against which the xchg/native ratios are to be read.
#
# --first N measures, instead of the two modes, the bound that learning keeps (docs/design.md,
# Learning): over a shape's first N calls (40 in the bound), auto may cost at most 10 % more than
# the better of native and the models' choice. Per repetition three runs, each cell's first N
# calls timed from the very first (`harness --modes short --short-warmup 0 --short-calls N
# --trace 1`): native, the models alone (the xchg side with XCHG_LEARN=0 besides --env's) and
# auto (the xchg side). A cell's figure is the median over the repetitions of auto's sum of the
# N calls divided by the lesser of native's and the models' sums in the same repetition; printed
# per cell with the three sums (medians), then the geometric mean, the worst cell and the cells
# over 1.10. The lesser of two noisy sums is biased low, so a cell where native and the models
# run alike reads above 1 with no excess at all. The control column shows by how much: the same
# ratio for a run that has no excess, the better side's (native or the models, by their medians)
# run of the next repetition divided by the same lesser sum. Read a cell's ratio against its
# control. A last line sums every cell's N calls per run and side (the medians over the
# repetitions, and auto's over the lesser of the other two): a program's view, steadier than a
# cell's; the bound stays per cell (the line also in DIR/<mpi>-<N>ranks[-cluster]-first-together.txt).
# Output: DIR/<mpi>-<N>ranks[-cluster]-first.csv, columns
#     mpi,ranks,collective,bytes,native_us,models_us,auto_us,ratio,control
# (collective alltoallv-skewed for the skewed counts; us: the sum of the N calls; control empty
# with one repetition).
#
# Output: DIR/<mpi>-<N>ranks.csv (DIR/<mpi>-<N>ranks-cluster.csv on the emulated cluster), both
# modes, columns
#     mpi,ranks,mode,collective,workload,bytes,native_us,xchg_us,ratio[,control_us,control]
# and every run's harness CSV in DIR/<mpi>-<N>ranks[-cluster]-runs/ (native-R.csv, xchg-R.csv,
# control-R.csv).
#
# Options:
#   --mpi mpich|openmpi  the MPI and its build: build/ or build/openmpi/ (default mpich)
#   -n N                 ranks (default 2; with --cluster the sum of the node sizes)
#   --repeat R           repetitions, each one native and one xchg run (default 5)
#   -o DIR               where the CSVs go (default build/compare)
#   --table FILE         the xchg runs get XCHG_TUNING=FILE
#   --env VAR=VALUE      the xchg runs get this XCHG_* variable (repeatable), e.g.
#                        --env XCHG_LEARN=0 --env XCHG_ALLTOALL=radix; --env XCHG_LIB=FILE is
#                        --lib FILE
#   --lib FILE           the library the xchg runs preload (default: the build's own,
#                        $BUILD/libxchg.so, made first), e.g. one built from another commit
#   --full               every power of two from 1 B to 64 KiB
#   --sizes LIST         these blocks instead (e.g. 1,4K)
#   --short-calls N      timed calls per cell in the short mode (default 15)
#   --steady-calls N     timed calls per cell in the steady mode (default 300)
#   --cache fresh|kept   the xchg runs' tuning cache (XCHG_CACHE, under DIR): fresh (default), an
#                        empty one per run, as a program's first run on a machine; kept, one for
#                        all runs, empty before the first, as a user's repeated runs
#   --first N            the bound of learning's cost over a shape's first N calls (above)
#   --control            native twice per repetition: native again/native is the resolution
#   --cluster SIZES      both sides on the emulated cluster (scripts/cluster; root): ranks per
#                        node, e.g. 3,2,2,1, on one switch; launched by scripts/xchgrun --nodes
#                        (--native for the native side), which holds MPI to the data links and,
#                        with more ranks than cores, runs Open MPI with mpi_yield_when_idle on both
#                        sides and sets XCHG_WAIT=yield for xchg as it does for every user
#   --rate RATE          the cluster's link rate (default 100mbit)
#   -h, --help           this text
# The cluster is built once for the whole comparison and torn down at the end (unless one of
# the same shape was up already); one cluster session at a time (/run/lock/xchg-cluster.session).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}
die() {
    echo "compare.sh: $*" >&2
    exit 2
}

mpi=mpich
ranks=2
repeat=5
outdir=build/compare
full=0
sizes=""
short_calls=15
steady_calls=300
control=0
first=0
cluster=""
rate=100mbit
cache=fresh
user_env=()
lib_given=""
while [ $# -gt 0 ]; do
    case "$1" in
    --mpi) mpi=${2:?--mpi needs mpich or openmpi}; shift 2 ;;
    -n) ranks=${2:?-n needs a number}; shift 2 ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    -o) outdir=${2:?-o needs a directory}; shift 2 ;;
    --table)
        [ -r "${2:?--table needs a file}" ] || die "cannot read the tuning table '$2'"
        user_env+=("XCHG_TUNING=$(readlink -f "$2")")
        shift 2
        ;;
    --env)
        [[ ${2:-} =~ ^XCHG_[A-Z0-9_]+=.*$ ]] || die "--env needs XCHG_NAME=VALUE, not '${2:-}'"
        if [[ $2 == XCHG_LIB=* ]]; then lib_given=${2#XCHG_LIB=}; else user_env+=("$2"); fi
        shift 2
        ;;
    --lib) lib_given=${2:?--lib needs a file}; shift 2 ;;
    --full) full=1; shift ;;
    --sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
    --short-calls) short_calls=${2:?--short-calls needs a number}; shift 2 ;;
    --steady-calls) steady_calls=${2:?--steady-calls needs a number}; shift 2 ;;
    --control) control=1; shift ;;
    --first) first=${2:?--first needs a number of calls}; shift 2 ;;
    --cache) cache=${2:?--cache needs fresh or kept}; shift 2 ;;
    --cluster) cluster=${2:?--cluster needs node sizes, e.g. 3,2,2,1}; shift 2 ;;
    --rate) rate=${2:?--rate needs a rate, e.g. 100mbit}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (--help lists them)" ;;
    esac
done
[[ $first =~ ^[0-9]+$ ]] || die "--first '$first' is not a number of calls"
[ "$first" -gt 0 ] && [ "$control" = 1 ] && die "--first and --control do not go together"
for pair in "ranks $ranks" "repeat $repeat" "short-calls $short_calls" "steady-calls $steady_calls"; do
    [[ ${pair#* } =~ ^[1-9][0-9]*$ ]] || die "--${pair%% *} '${pair#* }' is not a positive number"
done
case "$cache" in
fresh | kept) ;;
*) die "--cache must be fresh or kept, not '$cache'" ;;
esac
case "$mpi" in
mpich) build=build ;;
openmpi) build=build/openmpi ;;
*) die "--mpi must be mpich or openmpi, not '$mpi'" ;;
esac
if [ -n "$cluster" ]; then
    [[ $cluster =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--cluster '$cluster' is not a list of node sizes"
    ranks=$(($(echo "$cluster" | tr ',' '+')))
fi
if [ -z "$sizes" ]; then
    sizes=1,16,256,4K,64K
    [ "$full" = 1 ] && sizes=1,2,4,8,16,32,64,128,256,512,1K,2K,4K,8K,16K,32K,64K
fi

# The caller's XCHG_* variables do not reach either side; --env and --table give the xchg side's.
dropped=$(compgen -e | grep '^XCHG_' || true)
if [ -n "$dropped" ]; then
    echo "compare.sh: not passed on from the environment (use --env): ${dropped//$'\n'/ }"
fi
for var in $dropped; do unset "$var"; done
unset LD_PRELOAD

make --no-print-directory -s MPI="$mpi" lib bench-progs >/dev/null ||
    { echo "compare.sh: 'make MPI=$mpi lib bench-progs' failed" >&2; exit 1; }
harness=$root/$build/bench/harness
lib=$root/$build/libxchg.so
if [ -n "$lib_given" ]; then
    [ -f "$lib_given" ] || die "--lib: no such file '$lib_given'"
    lib=$(readlink -f "$lib_given")
fi

base=$mpi-${ranks}ranks${cluster:+-cluster}
mkdir -p "$outdir/$base-runs"
outdir=$(readlink -f "$outdir")
runs=$outdir/$base-runs
rm -f "$runs"/*.csv
# The xchg runs' tuning caches (XCHG_CACHE): fresh, one empty directory per run (a program's first
# run on a machine); kept, one directory for all runs, empty at the start (later runs read what
# the earlier ones learned, as a user's repeated runs do).
caches=$outdir/$base-caches
rm -rf "$caches"
mkdir -p -m 0700 "$caches"

# ---- launching: one machine, or the emulated cluster ----

xchgrun=("$root/scripts/xchgrun" --mpi="$mpi")
if [ -n "$cluster" ]; then
    why=$(scripts/cluster check) || { echo "compare.sh: ${why#cluster: }" >&2; exit 1; }
    mkdir -p /run/lock
    exec {lock_fd}>>/run/lock/xchg-cluster.session
    if ! flock -n "$lock_fd"; then
        echo "compare.sh: waiting for another cluster session (/run/lock/xchg-cluster.session)"
        flock "$lock_fd"
    fi
    up_out=$(scripts/cluster up --nodes "$cluster" --link "$rate")
    echo "$up_out"
    if [[ $up_out != "cluster: already up"* ]]; then
        trap 'scripts/cluster down >/dev/null 2>&1 || true' EXIT
    fi
    trap 'exit 130' INT
    trap 'exit 143' TERM
    xchgrun+=(--nodes "$cluster" --link "$rate" --keep)
    launch=()
    held=(XCHG_CLUSTER_HELD=1)
else
    launch=(-n "$ranks")
    held=()
fi

# run ROLE REPETITION: one harness run; ROLE native and control without the library, xchg with it.
# (--first: also ROLE models, the xchg side with learning off and no cache.)
run() {
    local role=$1 csv=$runs/$1-$2.csv side=() rc=0 modes=()
    if [ "$role" = xchg ]; then
        local cache_dir=$caches/kept
        [ "$cache" = fresh ] && cache_dir=$caches/run-$2
        mkdir -p -m 0700 "$cache_dir"
        side=(env "${held[@]}" XCHG_CACHE="$cache_dir" "${user_env[@]}" XCHG_LIB="$lib" \
            "${xchgrun[@]}" "${launch[@]}")
    elif [ "$role" = models ]; then
        side=(env "${held[@]}" "${user_env[@]}" XCHG_LEARN=0 XCHG_CACHE=0 XCHG_LIB="$lib" \
            "${xchgrun[@]}" "${launch[@]}")
    else
        side=(env "${held[@]}" "${xchgrun[@]}" --native "${launch[@]}")
    fi
    modes=(--short-calls "$short_calls" --steady-calls "$steady_calls")
    [ "$first" -gt 0 ] && modes=(--modes short --short-warmup 0 --short-calls "$first" --trace 1)
    timeout -k 10 3600 "${side[@]}" "$harness" --sizes "$sizes" "${modes[@]}" -o "$csv" \
        </dev/null >"$runs/$role-$2.log" 2>&1 || rc=$?
    if [ "$rc" -ne 0 ] || [ ! -s "$csv" ]; then
        echo "compare.sh: the $role run $2 failed (exit status $rc); its output:" >&2
        tail -n 20 "$runs/$role-$2.log" >&2
        exit 1
    fi
}

echo "== compare: $mpi, $ranks ranks${cluster:+ on nodes $cluster at $rate}, $repeat repetitions," \
    "blocks $sizes, xchg environment: ${user_env[*]:-none (defaults)}, tuning cache: $cache"
echo "   native: ${xchgrun[*]} --native ${launch[*]:+${launch[*]} }$harness"
echo "   xchg:   ${user_env[*]:+${user_env[*]} }${xchgrun[*]} ${launch[*]:+${launch[*]} }$harness (XCHG_LIB=$lib)"
roles=(native xchg)
[ "$control" = 1 ] && roles+=(control)
[ "$first" -gt 0 ] && roles=(native models xchg)
# Each repetition runs the roles in a rotated order (the first of repetition r is role r - 1,
# mod their count), so that no side always holds one place in the sequence. On the 2-core VM
# one library run four ways in a fixed order (MPICH, 2 ranks, MPI_Alltoall of 1 B, calls 11 to
# 100, medians of 16 and 12 runs) read highest in the last place both ways round: 0.87 us a
# call against 0.45 to 0.51, and reversed 0.74 against 0.63 to 0.69.
for ((r = 1; r <= repeat; r++)); do
    for ((j = 0; j < ${#roles[@]}; j++)); do
        run "${roles[(r - 1 + j) % ${#roles[@]}]}" "$r"
    done
    echo "   repetition $r of $repeat done"
done

# ---- --first: per cell, auto's sum of the first calls against the better of the others ----

if [ "$first" -gt 0 ]; then
    summary=$outdir/$base-first.csv
    together=$outdir/$base-first-together.txt
    rm -f "$together"
    # the trace lines of every run's log: trace,short,COLL,BYTES: t1 t2 ... (us)
    awk -v mpi="$mpi" -v ranks="$ranks" -v calls="$first" -v together="$together" '
        function median(list, count,    i, j, v, a) {
            for (i = 1; i <= count; i++) a[i] = list[i]
            for (i = 2; i <= count; i++)
                for (j = i; j > 1 && a[j - 1] > a[j]; j--) { v = a[j]; a[j] = a[j - 1]; a[j - 1] = v }
            return count % 2 ? a[(count + 1) / 2] : (a[count / 2] + a[count / 2 + 1]) / 2
        }
        FNR == 1 { split(FILENAME, path, "/"); name = path[length(path)]
                   role = name; sub(/-[0-9]+\.log$/, "", role)
                   rep = name; sub(/^[a-z]+-/, "", rep); sub(/\.log$/, "", rep) }
        /^trace,short,/ {
            split($1, head, ","); key = head[3] "," substr(head[4], 1, length(head[4]) - 1)
            if (NF - 1 != calls) next
            sum = 0
            for (i = 2; i <= NF; i++) sum += $i
            if (!(key in seen)) { seen[key] = 1; order[n++] = key }
            total[key, role, rep] = sum
            run[role, rep] += sum
            cells[role, rep]++
            reps[rep] = 1
        }
        function whole(k, r) {
            return (k, "native", r) in total && (k, "models", r) in total && (k, "xchg", r) in total
        }
        END {
            print "mpi,ranks,collective,bytes,native_us,models_us,auto_us,ratio,control"
            for (r in reps) if (r + 0 > last) last = r + 0
            for (i = 0; i < n; i++) {
                k = order[i]; c = 0
                for (r = 1; r <= last; r++) {
                    if (!whole(k, r)) continue
                    c++; rep_of[c] = r
                    nat[c] = total[k, "native", r]; mod[c] = total[k, "models", r]
                    aut[c] = total[k, "xchg", r]
                    least[c] = nat[c] < mod[c] ? nat[c] : mod[c]
                    ratio[c] = aut[c] / least[c]
                }
                if (c == 0) continue
                # the control: the better side run again (the next repetition, in a ring)
                better = median(nat, c) <= median(mod, c) ? "native" : "models"
                for (j = 1; j <= c; j++)
                    ctl[j] = total[k, better, rep_of[j % c + 1]] / least[j]
                printf "%s,%s,%s,%.1f,%.1f,%.1f,%.4g,%s\n", mpi, ranks, k, median(nat, c),
                    median(mod, c), median(aut, c), median(ratio, c),
                    (c > 1 ? sprintf("%.4g", median(ctl, c)) : "")
            }
            # the program view: every cell of a run summed, per side, the median over the runs
            # that measured the same cells on all three sides (a cell sum is a few hundred
            # microseconds that one slow stretch of the machine decides; the sum of a whole run
            # is steadier); the bound itself is per cell, above
            c = 0
            for (r = 1; r <= last; r++)
                if (cells["native", r] > 0 && cells["native", r] == cells["models", r] &&
                    cells["native", r] == cells["xchg", r]) {
                    c++; nat[c] = run["native", r]; mod[c] = run["models", r]; aut[c] = run["xchg", r]
                }
            if (c > 0) {
                n_all = median(nat, c); m_all = median(mod, c); a_all = median(aut, c)
                printf "all cells together (each run'"'"'s sum over its cells, the median over %d runs): native %.1f, models %.1f, auto %.1f us; auto / min(native, models) %.3f\n",
                    c, n_all, m_all, a_all, a_all / (n_all < m_all ? n_all : m_all) >together
            }
        }' "$runs"/native-*.log "$runs"/models-*.log "$runs"/xchg-*.log >"$summary"
    awk -F, -v calls="$first" '
        NR == 1 { printf "\nthe first %d calls of each cell, summed (us); ratio = auto / the lesser of native and models;\n", calls
                  printf "control = the better of native and models, run again, / the same lesser (no excess: the noise)\n"
                  printf "%-17s %8s %12s %12s %12s %8s %8s\n", "collective", "bytes", "native", "models", "auto", "ratio", "control"; next }
        {
            printf "%-17s %8s %12.1f %12.1f %12.1f %8.3f %8s\n", $3, $4, $5, $6, $7, $8,
                $9 == "" ? "-" : sprintf("%.3f", $9)
            cells++; logsum += log($8); over += $8 > 1.10
            if (cells == 1 || $8 > worst) { worst = $8; worst_cell = $3 " " $4 " B" }
            if ($9 != "") { controls++; ctl_log += log($9); ctl_over += $9 > 1.10
                            if (controls == 1 || $9 > ctl_worst) { ctl_worst = $9; ctl_cell = $3 " " $4 " B" } }
        }
        END {
            if (cells == 0) { print "first calls: no cells measured"; exit }
            printf "first %d calls: geometric mean of auto / min(native, models) over %d cells: %.3f; worst cell %s: %.3f; cells over 1.10: %d\n",
                calls, cells, exp(logsum / cells), worst_cell, worst, over
            if (controls > 0)
                printf "control (no excess): geometric mean %.3f; worst cell %s: %.3f; cells over 1.10: %d\n",
                    exp(ctl_log / controls), ctl_cell, ctl_worst, ctl_over
        }' "$summary"
    [ -s "$together" ] && cat "$together"
    echo
    echo "== compare: $summary (every run: $runs/)"
    exit 0
fi

# ---- the cells: the median over the repetitions of each side's per-run median ----

summary=$outdir/$base.csv
run_csvs=("$runs"/native-*.csv "$runs"/xchg-*.csv)
[ "$control" = 1 ] && run_csvs+=("$runs"/control-*.csv)
awk -F, -v mpi="$mpi" -v control_on="$control" '
    function median(list, count,    i, j, v, a) {
        for (i = 1; i <= count; i++) a[i] = list[i]
        for (i = 2; i <= count; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { v = a[j]; a[j] = a[j - 1]; a[j - 1] = v }
        return count % 2 ? a[(count + 1) / 2] : (a[count / 2] + a[count / 2 + 1]) / 2
    }
    FNR == 1 { role = FILENAME; sub(/.*\//, "", role); sub(/-[0-9]+\.csv$/, "", role); next }
    {
        key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
        if (!(key in head)) { order[n++] = key; head[key] = mpi "," $5 "," $1 "," $2 "," $3 "," $4 }
        count[key, role]++
        value[key, role, count[key, role]] = $6
    }
    END {
        printf "mpi,ranks,mode,collective,workload,bytes,native_us,xchg_us,ratio%s\n",
            control_on ? ",control_us,control" : ""
        for (i = 0; i < n; i++) {
            k = order[i]
            split("native xchg control", roles, " ")
            for (r = 1; r <= 3; r++) {
                delete l
                for (j = 1; j <= count[k, roles[r]]; j++) l[j] = value[k, roles[r], j]
                m[r] = count[k, roles[r]] ? median(l, count[k, roles[r]]) : -1
            }
            if (m[1] <= 0 || m[2] < 0) continue
            printf "%s,%.3f,%.3f,%.5g", head[k], m[1], m[2], m[2] / m[1]
            if (control_on) printf ",%.3f,%.5g", m[3], m[3] / m[1]
            printf "\n"
        }
    }' "${run_csvs[@]}" >"$summary"

# ---- per mode: the table, the geometric mean and the worst cell ----

for mode in short steady; do
    awk -F, -v mode="$mode" '
        function human(b) {
            if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
            return b " B"
        }
        NR == 1 || $3 != mode { next }
        {
            if (cells == 0) {
                printf "\n%s mode\n", mode
                printf "%-10s %-10s %8s %12s %12s %12s%s\n", "collective", "workload", "bytes",
                    "native us", "xchg us", "xchg/native", (NF >= 11 ? "  native again" : "")
            }
            printf "%-10s %-10s %8s %12.2f %12.2f %12.3f", $4, $5, human($6), $7, $8, $9
            cell = $4 " " $5 " " human($6)
            if (NF >= 11) {
                printf "  %13.3f", $11
                clog += log($11)
                if (cells == 0 || $11 > cworst) { cworst = $11; cworst_cell = cell }
            }
            printf "\n"
            cells++
            logsum += log($9)
            faster += $9 < 1
            if (cells == 1 || $9 > worst) { worst = $9; worst_cell = cell }
        }
        END {
            if (cells == 0) { printf "%s mode: no cells measured\n", mode; exit }
            printf "%s: geometric mean of xchg/native over %d cells: %.3f (xchg faster in %d)\n",
                mode, cells, exp(logsum / cells), faster
            printf "%s: worst cell: %s: %.3f\n", mode, worst_cell, worst
            if (cworst_cell != "")
                printf "%s: control, native again/native: geometric mean %.3f, worst cell %s: %.3f\n",
                    mode, exp(clog / cells), cworst_cell, cworst
        }' "$summary"
done
echo
echo "== compare: $summary (every run: $runs/)"
