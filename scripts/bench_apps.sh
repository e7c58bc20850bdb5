#!/usr/bin/env bash
# bench_apps.sh (make bench-apps): unmodified MPI applications natively and under xchg, in
# separate processes, alternating, side by side: what a user of each program sees.
#
#   scripts/bench_apps.sh                       MPICH and Open MPI, 2 ranks, every application
#   scripts/bench_apps.sh --smoke               the same with small inputs, one repetition
#   scripts/bench_apps.sh --mpi openmpi --cluster 3,2,2,1 --rate 100mbit
#
# Applications (each checks its own result; a run that fails stops the script):
#   radix_sort  tests/apps/radix_sort.c, the integer sort of Bader, Helman and JaJa: --keys keys
#               per rank (default 2^21: each pass's MPI_Alltoallv moves 32 MiB of 16-byte records
#               per rank), one sort per process (-i 1: a program sorts once, so xchg's first calls
#               count); total = its own sort time; must print "radix_sort: OK". MPICH and Open MPI.
#   fft3d       bench/fft3d.c on FFTW's MPI interface, --fft N (default 128: N^3 complex numbers),
#               5 forward and backward pairs, planner FFTW_ESTIMATE (the same plans in every run):
#               two lines, "fft3d" (the FFT built from its parts: total = its time, comm = its
#               transposes, which FFTW does with MPI_Alltoall) and "fft3d dft_3d" (FFTW's own 3D
#               FFT, whose transposes FFTW does with MPI_Sendrecv, which xchg does not serve: total
#               only); must print "fft3d: OK", and its round-trip errors must be the same in every
#               run, native and xchg (the collectives only move data). Open MPI only (Debian builds
#               libfftw3-mpi against Open MPI).
#   hpcc        HPCC's MPIFFT (Debian's hpcc, Open MPI, 4 ranks on one node) through
#               scripts/hpcc.sh, which alternates native and xchg runs and checks Success, the
#               process count, that MPIFFT's error is the same in every run and that MPI_Alltoall
#               went through xchg; Gflop/s side by side (higher is better). Not on the cluster.
# The communication time ("comm") of radix_sort is the slowest rank's time inside MPI_Alltoall,
# MPI_Alltoallv and MPI_Allgather, from bench/colltime.c, a timer preloaded on both sides
# (natively alone, under xchg before the library: LD_PRELOAD=libcolltime.so[:libxchg.so], set
# for the program only); it costs two clock reads per call.
#
# Each repetition runs an application once natively (no library, no XCHG_* variable) and once
# under xchg (the environment a user gets: the caller's XCHG_* variables are dropped, only those
# of --env are set); a figure is the median over the repetitions; ratio = xchg/native (for
# Gflop/s too, so there above 1 is better). Open MPI with more ranks than cores runs with
# --oversubscribe --mca mpi_yield_when_idle 1 on both sides (scripts/xchgrun adds it).
#
# Options:
#   --mpi mpich|openmpi|both   (default both)
#   -n N                 ranks of radix_sort and fft3d on one node (default 2)
#   --repeat R           repetitions (default 5; hpcc: R pairs)
#   --apps LIST          radix_sort,fft3d,hpcc (default all that the MPI can run)
#   --keys K             radix_sort's keys per rank (default 2097152)
#   --fft N              fft3d's size (default 128)
#   --env VAR=VALUE      an XCHG_* variable for the xchg runs (repeatable); --env XCHG_LIB=FILE
#                        is --lib FILE
#   --lib FILE           the library the xchg runs preload, with one --mpi (default: the build's
#                        own, build/libxchg.so or build/openmpi/libxchg.so), e.g. one built
#                        from another commit
#   --cluster SIZES      radix_sort and fft3d on the emulated cluster (scripts/cluster; root),
#                        ranks per node, e.g. 3,2,2,1, launched by scripts/xchgrun --nodes; with
#                        more ranks than cores the xchg side gets XCHG_WAIT=yield, as xchgrun
#                        gives every user there
#   --rate RATE          the cluster's link rate (default 100mbit)
#   --cache fresh|kept   the xchg runs' tuning cache (XCHG_CACHE under DIR): fresh (default), an
#                        empty one per run, a program's first run on a machine; kept, one for
#                        all runs, empty before the first, a user's repeated runs (hpcc's pairs
#                        always share one: kept)
#   --smoke              small inputs (radix_sort 65536 keys, fft3d 32, hpcc 1 pair), 1 repetition
#   -o DIR               results (default build/bench-apps): apps.csv
#                        (app,mpi,ranks,metric,native,xchg,ratio) and every run's log
# Installs what it needs (scripts/setup.sh: the MPIs, libfftw3-dev, libfftw3-mpi-dev, hpcc).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
}
die() {
    echo "bench_apps.sh: $*" >&2
    exit 2
}

mpis="mpich openmpi"
ranks=2
repeat=5
apps=radix_sort,fft3d,hpcc
keys=2097152
fft_n=128
fft_iterations=5
hpcc_pairs=""
cluster=""
rate=100mbit
outdir=build/bench-apps
cache=fresh
user_env=()
lib_given=""
while [ $# -gt 0 ]; do
    case "$1" in
    --mpi)
        case ${2:-} in mpich | openmpi) mpis=$2 ;; both) mpis="mpich openmpi" ;;
        *) die "--mpi must be mpich, openmpi or both, not '${2:-}'" ;; esac
        shift 2
        ;;
    -n) ranks=${2:?-n needs a number}; shift 2 ;;
    --repeat) repeat=${2:?--repeat needs a number}; shift 2 ;;
    --apps) apps=${2:?--apps needs a list}; shift 2 ;;
    --keys) keys=${2:?--keys needs a number}; shift 2 ;;
    --fft) fft_n=${2:?--fft needs a number}; shift 2 ;;
    --env)
        [[ ${2:-} =~ ^XCHG_[A-Z0-9_]+=.*$ ]] || die "--env needs XCHG_NAME=VALUE, not '${2:-}'"
        if [[ $2 == XCHG_LIB=* ]]; then lib_given=${2#XCHG_LIB=}; else user_env+=("$2"); fi
        shift 2
        ;;
    --lib) lib_given=${2:?--lib needs a file}; shift 2 ;;
    --cluster) cluster=${2:?--cluster needs node sizes, e.g. 3,2,2,1}; shift 2 ;;
    --rate) rate=${2:?--rate needs a rate}; shift 2 ;;
    --smoke) keys=65536 fft_n=32 fft_iterations=2 repeat=1 hpcc_pairs=1; shift ;;
    -o) outdir=${2:?-o needs a directory}; shift 2 ;;
    --cache) cache=${2:?--cache needs fresh or kept}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option '$1' (--help lists them)" ;;
    esac
done
for pair in "n $ranks" "repeat $repeat" "keys $keys" "fft $fft_n"; do
    [[ ${pair#* } =~ ^[1-9][0-9]*$ ]] || die "-${pair%% *} '${pair#* }' is not a positive number"
done
for app in ${apps//,/ }; do
    case $app in radix_sort | fft3d | hpcc) ;; *) die "unknown application '$app' (radix_sort, fft3d, hpcc)" ;; esac
done
if [ -n "$cluster" ]; then
    [[ $cluster =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "--cluster '$cluster' is not a list of node sizes"
    ranks=$(($(echo "$cluster" | tr ',' '+')))
fi
hpcc_pairs=${hpcc_pairs:-$repeat}
if [ -n "$lib_given" ]; then
    [ "$(wc -w <<<"$mpis")" = 1 ] || die "--lib names one MPI's library: give --mpi mpich or --mpi openmpi"
    [ -f "$lib_given" ] || die "--lib: no such file '$lib_given'"
    lib_given=$(readlink -f "$lib_given")
fi
wants() { [[ ,$apps, == *",$1,"* ]]; }

# The caller's XCHG_* variables reach neither side.
dropped=$(compgen -e | grep '^XCHG_' || true)
[ -z "$dropped" ] || echo "bench_apps.sh: not passed on from the environment (use --env): ${dropped//$'\n'/ }"
for var in $dropped; do unset "$var"; done
unset LD_PRELOAD

# ---- packages and builds ----

for mpi in $mpis; do
    extra=()
    if [ "$mpi" = openmpi ]; then
        wants fft3d && extra+=(libfftw3-dev libfftw3-mpi-dev)
        wants hpcc && extra+=(hpcc)
    fi
    scripts/setup.sh "$mpi" "${extra[@]}"
    build=build
    [ "$mpi" = openmpi ] && build=build/openmpi
    make --no-print-directory -s MPI="$mpi" lib bench-app-progs "$build/apps/radix_sort" >/dev/null ||
        { echo "bench_apps.sh: the build for $mpi failed (make MPI=$mpi lib bench-app-progs)" >&2; exit 1; }
done
mkdir -p "$outdir"
outdir=$(readlink -f "$outdir")
logs=$outdir/logs
rm -rf "$logs"
mkdir -p "$logs"
case "$cache" in
fresh | kept) ;;
*) echo "bench_apps.sh: --cache must be fresh or kept, not '$cache'" >&2; exit 2 ;;
esac
# The xchg runs' tuning caches (XCHG_CACHE), as compare.sh: fresh, an empty one per run (a
# program's first run on a machine); kept, one for all runs, empty before the first.
caches=$outdir/caches
rm -rf "$caches"
mkdir -p -m 0700 "$caches/kept"

# ---- launching: one machine, or the emulated cluster ----

held=()
place=(-n "$ranks")
if [ -n "$cluster" ]; then
    why=$(scripts/cluster check) || { echo "bench_apps.sh: ${why#cluster: }" >&2; exit 1; }
    mkdir -p /run/lock
    exec {lock_fd}>>/run/lock/xchg-cluster.session
    if ! flock -n "$lock_fd"; then
        echo "bench_apps.sh: waiting for another cluster session (/run/lock/xchg-cluster.session)"
        flock "$lock_fd"
    fi
    up_out=$(scripts/cluster up --nodes "$cluster" --link "$rate")
    echo "$up_out"
    [[ $up_out == "cluster: already up"* ]] || trap 'scripts/cluster down >/dev/null 2>&1 || true' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    held=(XCHG_CLUSTER_HELD=1)
    place=(--nodes "$cluster" --link "$rate" --keep)
fi

# launch LOG SIDE MPI PROGRAM ARGS...: one run of PROGRAM, SIDE native or xchg, output to LOG.
# Both sides go through scripts/xchgrun --native (the same launcher options); the preload is set
# for the program alone, after whatever the launcher preloads for its own purposes.
launch() {
    local log=$1 side=$2 mpi=$3 build=build vars=() preload
    shift 3
    [ "$mpi" = openmpi ] && build=build/openmpi
    preload=$root/$build/bench/libcolltime.so
    if [ "$side" = xchg ]; then
        preload+=:${lib_given:-$root/$build/libxchg.so}
        vars=("${user_env[@]}")
        if [ "$cache" = fresh ]; then
            vars=(XCHG_CACHE="$(mktemp -d "$caches/run-XXXXXX")" "${vars[@]}")
        else
            vars=(XCHG_CACHE="$caches/kept" "${vars[@]}")
        fi
        if [ -n "$cluster" ] && [ "$ranks" -gt "$(nproc)" ] && [[ " ${user_env[*]} " != *" XCHG_WAIT="* ]]; then
            vars+=(XCHG_WAIT=yield)
        fi
    fi
    # shellcheck disable=SC2016 # expanded by the rank's shell
    timeout -k 10 1800 env "${held[@]}" "${vars[@]}" scripts/xchgrun --mpi="$mpi" --native \
        "${place[@]}" sh -c 'LD_PRELOAD="$0${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"' "$preload" \
        "$@" </dev/null >"$log" 2>&1
}

# A failed run stops everything, with its log's tail.
failed() { # LOG WHY
    echo "bench_apps.sh: $2 (log $1):" >&2
    tail -n 20 "$1" >&2
    exit 1
}

# Figures "metric value" per line from a run's log, by application; the run's check.
radix_figures() { # LOG
    grep -aq '^radix_sort: OK$' "$1" || return 1
    sed -nE 's/^radix_sort: .* time=([0-9.]+) s.*/total_s \1/p' "$1"
    sed -nE 's/^colltime: .*time=([0-9.]+) s.*/comm_s \1/p' "$1"
}
fft_figures() { # LOG
    grep -aq '^fft3d: OK$' "$1" || return 1
    sed -nE 's/^fft3d: split: fft=([0-9.]+) s transposes=([0-9.]+) s.*/total_s \1\ncomm_s \2/p' "$1"
    sed -nE 's/^fft3d: dft_3d: fft=([0-9.]+) s.*/dft_3d_total_s \1/p' "$1"
}

# One application on one MPI, REPEAT times each side: figures to $outdir/figures.txt as
# "app mpi ranks metric side value".
run_app() { # APP MPI
    local app=$1 mpi=$2 build=build r side log program=() figures
    [ "$mpi" = openmpi ] && build=build/openmpi
    case $app in
    radix_sort) program=("$root/$build/apps/radix_sort" -n "$keys" -i 1) ;;
    fft3d) program=("$root/$build/bench/fft3d" -n "$fft_n" -i "$fft_iterations" -p estimate) ;;
    esac
    echo "== $app, $mpi, $ranks ranks${cluster:+ on nodes $cluster at $rate}: ${program[*]}"
    for ((r = 1; r <= repeat; r++)); do
        # odd repetitions native first, even ones xchg first: neither side always runs right
        # after the other (a run's place in a fixed sequence moved per-call times on the 2-core
        # VM: scripts/compare.sh)
        local sides=(native xchg)
        [ $((r % 2)) -eq 0 ] && sides=(xchg native)
        for side in "${sides[@]}"; do
            log=$logs/$app-$mpi-$side-$r.log
            launch "$log" "$side" "$mpi" "${program[@]}" || failed "$log" "$app $side run $r failed"
            if [ "$app" = radix_sort ]; then figures=$(radix_figures "$log"); else figures=$(fft_figures "$log"); fi
            [ -n "$figures" ] || failed "$log" "$app $side run $r did not pass its own check"
            echo "$figures" | awk -v a="$app" -v m="$mpi" -v n="$ranks" -v s="$side" \
                '{ print a, m, n, $1, s, $2 }' >>"$outdir/figures.txt"
        done
    done
    if [ "$app" = fft3d ]; then
        # the collectives only move data: every run's errors are the same numbers
        local errors
        errors=$(grep -ahoE '(dft_3d|split): .*error=[0-9.e+-]+' "$logs/fft3d-$mpi-"*.log |
            sed -E 's/: .*error=/ /' | sort -u | wc -l)
        [ "$errors" -eq 2 ] || failed "$logs/fft3d-$mpi-xchg-1.log" \
            "fft3d's round-trip errors differ between runs: $(grep -ahoE '(dft_3d|split): .*error=[0-9.e+-]+' "$logs/fft3d-$mpi-"*.log | sed -E 's/: .*error=/ /' | sort -u | tr '\n' ' ')"
    fi
}

rm -f "$outdir/figures.txt"
hpcc_line=""
for mpi in $mpis; do
    wants radix_sort && run_app radix_sort "$mpi"
    [ "$mpi" = openmpi ] && wants fft3d && run_app fft3d "$mpi"
    if [ "$mpi" = openmpi ] && wants hpcc; then
        if [ -n "$cluster" ]; then
            echo "== hpcc: left out on the cluster (scripts/hpcc.sh runs on one node)"
        else
            echo "== hpcc MPIFFT, openmpi, 4 ranks: scripts/hpcc.sh $hpcc_pairs"
            env XCHG_CACHE="$caches/kept" ${lib_given:+XCHG_LIB="$lib_given"} "${user_env[@]}" \
                scripts/hpcc.sh "$hpcc_pairs" >"$logs/hpcc.log" 2>&1 ||
                failed "$logs/hpcc.log" "scripts/hpcc.sh failed"
            hpcc_line=$(grep -a '^hpcc.sh: MPIFFT_Gflops median' "$logs/hpcc.log")
            echo "$hpcc_line" | sed -nE 's/.*native=([0-9.e+-]+) xchg=([0-9.e+-]+).*/hpcc openmpi 4 mpifft_gflops native \1\nhpcc openmpi 4 mpifft_gflops xchg \2/p' >>"$outdir/figures.txt"
        fi
    fi
done

# ---- the table: medians over the repetitions ----

awk '
    function median(list, count,    i, j, v, a) {
        for (i = 1; i <= count; i++) a[i] = list[i]
        for (i = 2; i <= count; i++)
            for (j = i; j > 1 && a[j - 1] > a[j]; j--) { v = a[j]; a[j] = a[j - 1]; a[j - 1] = v }
        return count % 2 ? a[(count + 1) / 2] : (a[count / 2] + a[count / 2 + 1]) / 2
    }
    {
        key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
        if (!(key in seen)) { seen[key] = 1; order[n++] = key }
        count[key, $5]++
        value[key, $5, count[key, $5]] = $6
    }
    END {
        print "app,mpi,ranks,metric,native,xchg,ratio"
        for (i = 0; i < n; i++) {
            k = order[i]
            split(k, part, SUBSEP)
            for (s = 1; s <= 2; s++) {
                side = s == 1 ? "native" : "xchg"
                delete l
                for (j = 1; j <= count[k, side]; j++) l[j] = value[k, side, j]
                m[s] = count[k, side] ? median(l, count[k, side]) : 0
            }
            printf "%s,%s,%s,%s,%.6g,%.6g,%s\n", part[1], part[2], part[3], part[4], m[1], m[2],
                (m[1] > 0 ? sprintf("%.3f", m[2] / m[1]) : "?")
        }
    }' "$outdir/figures.txt" >"$outdir/apps.csv"

echo
printf '%-16s %-8s %5s  %12s %12s %7s  %12s %12s %7s\n' application mpi ranks "native" "xchg" \
    "ratio" "comm native" "comm xchg" "ratio"
awk -F, 'NR > 1 {
        name = $1; metric = $4
        if (metric == "dft_3d_total_s") { name = "fft3d dft_3d"; metric = "total_s" }
        if (metric == "mpifft_gflops") name = "hpcc MPIFFT"
        key = name "," $2 "," $3
        if (!(key in row)) order[n++] = key
        row[key] = 1
        cell[key, metric] = sprintf("%12s %12s %7s", $5, $6, $7)
        unit[key] = metric == "mpifft_gflops" ? "Gflop/s" : "s"
        if (metric == "mpifft_gflops") cell[key, "total_s"] = cell[key, metric]
    }
    END {
        for (i = 0; i < n; i++) {
            split(order[i], f, ",")
            comm = (order[i], "comm_s") in cell ? cell[order[i], "comm_s"] : sprintf("%12s %12s %7s", "-", "-", "-")
            printf "%-16s %-8s %5s  %s  %s  (%s)\n", f[1], f[2], f[3], cell[order[i], "total_s"], comm, unit[order[i]]
        }
    }' "$outdir/apps.csv"
echo "(medians over $repeat repetitions; ratio = xchg/native: below 1 is faster for times, above 1 for Gflop/s)"
[ -z "$hpcc_line" ] || echo "$hpcc_line (hpcc: $hpcc_pairs pairs; $logs/hpcc.log)"
echo "== bench-apps: $outdir/apps.csv (logs: $logs/)"
