# shellcheck shell=bash
# harness.sh: bench/harness.c, the timing program of scripts/compare.sh, sourced by
# run_tests.sh (begin_case, native, preloaded, pass, fail, rc_reason, $build_dir, $LOGS, $MPI).
# Correctness only: no time is asserted.
#
#  - the harness natively and with the library preloaded (XCHG_STATS=1), 2 ranks, blocks 1 and
#    4096 B, 1 untimed and 3 timed short calls, 3 steady calls per cell: exit status 0 (the
#    program checks every received byte of each cell's first and last call and exits 1 on a wrong
#    one), and its CSV: the header and one line per mode, cell and block (16), each with 3 timed
#    calls, 2 ranks and 0 < min <= median; preloaded, the statistics must show each of the three
#    collectives served by xchg (the calls went through the library).

# shellcheck disable=SC2154 # build_dir, log and start come from run_tests.sh
harness_bin=$build_dir/bench/harness
# shellcheck disable=SC2054 # the list is one argument
harness_args=(--sizes 1,4096 --short-warmup 1 --short-calls 3 --steady-calls 3)

# Why the harness CSV is not as expected (nothing when it is).
harness_csv_wrong() { # CSV
    if [ "$(head -n 1 "$1" 2>/dev/null)" != "mode,collective,workload,bytes,ranks,median_us,min_us,calls" ]; then
        echo "$1 has no CSV header"
        return
    fi
    awk -F, 'NR > 1 {
            n++; key[$1 "/" $2 "/" $3 "/" $4]++
            if ($5 != 2 || $8 != 3) { print "line " NR ": ranks " $5 ", calls " $8; exit }
            if (!(0 < $7 && $7 <= $6)) { print "line " NR ": min " $7 " and median " $6 " out of order"; exit }
        }
        END {
            if (n != 16) { print n " lines, not 16"; exit }
            for (k in key) if (key[k] != 1) { print k " appears " key[k] " times"; exit }
        }' "$1"
}

for harness_side in native preloaded; do
    name="harness $harness_side p=2 (every byte of first and last calls, one CSV line per cell)"
    begin_case "$name" || continue
    if [ ! -x "$harness_bin" ]; then
        fail "$name" "$harness_bin is not built (make MPI=$MPI all)"
        continue
    fi
    csv=$LOGS/harness_$harness_side.csv
    rm -f "$csv"
    if [ "$harness_side" = native ]; then
        native "$log" 2 -- "$harness_bin" "${harness_args[@]}" -o "$csv"
    else
        preloaded "$log" 2 XCHG_STATS=1 -- "$harness_bin" "${harness_args[@]}" -o "$csv"
    fi
    rc=$?
    why=""
    if [ "$rc" -ne 0 ]; then
        why=$(rc_reason "$rc")
    elif why=$(harness_csv_wrong "$csv") && [ -n "$why" ]; then
        :
    elif [ "$harness_side" = preloaded ]; then
        for coll in alltoall allgather alltoallv; do
            grep -aq "^xchg: $coll " "$log" || why="no 'xchg: $coll' statistics line: the calls did not go through the library"
        done
    fi
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
done

# scripts/compare.sh --first N --lib FILE: the bound's three runs (native, the models alone,
# auto) with the library FILE on the xchg side, a copy of the build's under another name, which
# the xchg run's verbose first line must name (an A/B of two builds depends on it); and the
# --first CSV: its header and one line per collective at 1 B, each with positive sums, a ratio
# and, from two repetitions, a control; and the line that adds the cells of each run up.
name="harness compare.sh --first 3 --lib (the library given, the first calls' sums, the control)"
if begin_case "$name"; then
    cmp_dir=$LOGS/compare_first
    rm -rf "$cmp_dir"
    mkdir -p "$cmp_dir"
    cp "$LIB" "$cmp_dir/libxchg-copy.so"
    run_logged "$log" "$root/scripts/compare.sh" --mpi "$MPI" -n 2 --repeat 2 --sizes 1 --first 3 \
        --lib "$cmp_dir/libxchg-copy.so" --env XCHG_VERBOSE=1 -o "$cmp_dir"
    rc=$?
    first_csv=$cmp_dir/$MPI-2ranks-first.csv
    why=""
    if [ "$rc" -ne 0 ]; then
        why=$(rc_reason "$rc")
    elif ! grep -aq "library $cmp_dir/libxchg-copy.so\$" "$cmp_dir/$MPI-2ranks-runs/xchg-1.log"; then
        why="the xchg run did not preload the library of --lib: $(grep -a -m 1 '^xchg .* library ' "$cmp_dir/$MPI-2ranks-runs/xchg-1.log")"
    elif [ "$(head -n 1 "$first_csv" 2>/dev/null)" != "mpi,ranks,collective,bytes,native_us,models_us,auto_us,ratio,control" ]; then
        why="$first_csv has no header"
    elif ! grep -aqE '^all cells together \(each run.s sum over its cells, the median over 2 runs\): native [0-9.]+, models [0-9.]+, auto [0-9.]+ us; auto / min\(native, models\) [0-9.]+$' "$log"; then
        why="no 'all cells together (...): native N, models N, auto N us; auto / min(native, models) R' line for the 2 runs"
    else
        why=$(awk -F, 'NR > 1 { n++; if (!($5 > 0 && $6 > 0 && $7 > 0 && $8 > 0 && $9 > 0)) { print "line " NR " has a sum, ratio or control that is not positive"; exit } }
                       END { if (n != 4) print n " cells, not 4" }' "$first_csv")
    fi
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
fi
