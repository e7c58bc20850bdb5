# shellcheck shell=bash
# bench.sh: xchg-bench (tools/xchg-bench.c), sourced by run_tests.sh (begin_case, native, pass,
# fail, rc_reason, $build_dir, $LOGS). xchg-bench links the library itself: no preload.
#
#  - xchg-bench --check at 3 ranks, every collective, specs native, auto, one xchg algorithm
#    each and native again, blocks 1, 100 and 4096 B, --rounds 3 (the specs' turns alternate):
#    every received byte of every call is checked by the tool (a wrong one exits 1); the CSV
#    must hold the header and exactly one line per (collective, spec, block), the native given
#    again as native#2, each with at least --min-iters iterations in all and min <= median <=
#    max;
#  - the same with a bad --rounds value: exit status 2, a message naming --rounds.

bench_bin=$build_dir/xchg-bench
if [ -x "$bench_bin" ]; then
    name="xchg-bench --check --rounds 3 p=3 (every byte, one line per collective, spec, block, native given twice)"
    if begin_case "$name"; then
        csv=$LOGS/bench_check.csv
        rm -f "$csv"
        native "$log" 3 -- "$bench_bin" --check --rounds 3 --algos native,auto,pairwise,ring,native \
            --sizes 1,100,4096 --warmup 2 --time-ms 30 --min-iters 6 -o "$csv"
        rc=$?
        why=""
        if [ "$rc" -ne 0 ]; then
            why="$(rc_reason "$rc")"
        elif [ "$(head -n 1 "$csv" 2>/dev/null)" != \
            "mpi,ranks,collective,algorithm,params,bytes,iters,min_us,median_us,max_us" ]; then
            why="$csv has no CSV header"
        else
            # alltoall and alltoallv: native, auto, pairwise, native#2; allgather: native, auto,
            # ring, native#2
            why=$(awk -F, 'NR > 1 {
                    n++; key[$3 "/" $4 "/" $6]++; again += $4 == "native#2"
                    if ($7 < 6) { print "line " NR ": " $7 " iterations"; exit }
                    if (!($8 <= $9 && $9 <= $10)) { print "line " NR ": min/median/max out of order"; exit }
                }
                END {
                    if (n != 36) { print n " lines, not 36"; exit }
                    if (again != 9) { print again " native#2 lines, not 9"; exit }
                    for (k in key) if (key[k] != 1) { print k " appears " key[k] " times"; exit }
                }' "$csv")
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    fi
    name="xchg-bench --rounds 0 (bad value)"
    if begin_case "$name"; then
        native "$log" 1 -- "$bench_bin" --rounds 0
        rc=$?
        if [ "$rc" -eq 2 ] && grep -aq -- "--rounds" "$log"; then pass "$name" "$start"; else
            fail "$name" "exit $rc (expected 2) or no message naming --rounds" "$log"; fi
    fi
else
    fail "xchg-bench" "$bench_bin is not built"
fi
