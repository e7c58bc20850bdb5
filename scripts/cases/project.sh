# shellcheck shell=bash
# project.sh: the cost projections to 65 536 ranks (build/xchg-project, sim/project.c),
# sourced by run_tests.sh (begin_case, pass, fail, $build_dir, $LOGS). No MPI is started.
#
#  - xchg-project --tsv: exits 0 (it also fails when tuning/cost_native.c stops pricing native as
#    MPICH's default algorithm, checked around every threshold), prints 96 rows (3 machines x 2
#    collectives x p in 64, 1024, 16384, 65536 x blocks 8, 256, 4096, 65536), every time finite
#    and positive, every ratio the quotient of its times, and every algorithm named;
#  - figures worked out by hand from the constants (see docs/projections.md, "Checks"):
#      SP-1 alltoall p=64, 64 KiB, MPICH's pairwise: 63 (29 us + 65536 x 0.12 us)
#        = 0.49727916 s;
#      SP-1 alltoall p=1024, 8 B, MPICH's Bruck: 10 rounds of 512 blocks,
#        10 (29 us + 4096 x 0.12 us) = 5.2052 ms;
#      Paragon allgather p=65536, 8 B, MPICH's ring: 65535 (75 us + 8 x 0.011 us) + 8 x 0.014 us
#        = 4.920892192 s;
#      NDR alltoall p=65536, 8 B, xchg auto's pairwise with all 65535 messages in flight:
#        2 us + 65535 x 8 x 0.02 ns + 8 x 0.1 ns = 12.4864 us;
#  - docs/projections.md holds the model tables the tool prints now (xchg-project --update on a
#    copy changes nothing): a change to a cost model that moves a figure fails here until
#    `make projections` is run and the text checked. The simulated tables (--sim, a minute or
#    two of build/xchg-sim runs) are left to `make projections`: --update without --sim does
#    not touch them.

project_bin=$build_dir/xchg-project

# project_field TSV MACHINE COLL P BLOCK FIELD: one field of the row (MACHINE: a part of its name)
project_field() {
    awk -F'\t' -v m="$2" -v c="$3" -v p="$4" -v b="$5" -v f="$6" \
        'index($1, m) && $2 == c && $3 == p && $4 == b { print $f; exit }' "$1"
}

# project_close A B: 0 when A and B agree to 1e-6 relative
project_close() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 1e-6 * b) }'
}

# project_table_problem TSV: empty when every row is whole, else the first problem. Fields:
# 5 7 9 13 15 algorithms, 6 8 10 14 16 times, 11 = 6/8, 12 = 6/10, 17 = 14/16.
project_table_problem() {
    awk -F'\t' '
        NR == 1 { next }
        {
            rows++
            if (NF != 17) { printf "row %d has %d fields, not 17", NR, NF; bad = 1; exit }
            n = split("6 8 10 14 16", t, " ")
            for (j = 1; j <= n; j++)
                if (!($t[j] + 0 > 0 && $t[j] + 0 < 1e30)) {
                    printf "row %d: time field %d is \"%s\"", NR, t[j], $t[j]; bad = 1; exit
                }
            n = split("5 7 9 13 15", l, " ")
            for (j = 1; j <= n; j++)
                if ($l[j] == "") { printf "row %d: no algorithm in field %d", NR, l[j]; bad = 1; exit }
            n = split("11 6 8 12 6 10 17 14 16", q, " ")
            for (j = 1; j <= n; j += 3) {
                r = $q[j] + 0; want = $q[j + 1] / $q[j + 2]; d = r - want
                if (d < 0) d = -d
                if (!(r > 0 && r < 1e30) || d > 1e-5 * want) {
                    printf "row %d: ratio field %d is \"%s\", its times give %g", NR, q[j], $q[j], want
                    bad = 1; exit
                }
            }
        }
        END { if (!bad && rows != 96) printf "%d rows, not 96", rows }' "$1"
}

name="xchg-project: 96 rows, finite positive times and ratios, hand-computed figures, docs up to date"
if begin_case "$name"; then
    tsv=$LOGS/project.tsv
    why=""
    if [ ! -x "$project_bin" ]; then
        why="$project_bin is missing (make builds it: sim/project.mk)"
    elif ! "$project_bin" --tsv >"$tsv" 2>"$log"; then
        why="xchg-project --tsv failed: $(head -c 300 "$log")"
    else
        why=$(project_table_problem "$tsv")
    fi
    if [ -z "$why" ]; then
        # machine, collective, p, block, time field, by hand (s), what, the algorithm it must be
        while read -r machine coll p block field want what algo_like; do
            got=$(project_field "$tsv" "$machine" "$coll" "$p" "$block" "$field")
            algo=$(project_field "$tsv" "$machine" "$coll" "$p" "$block" $((field - 1)))
            if [ -z "$got" ] || ! project_close "$got" "$want"; then
                why="$machine $coll p=$p block=$block: $what is '$got' s (${algo:-no row}), by hand $want s"
            elif [[ $algo != $algo_like ]]; then
                why="$machine $coll p=$p block=$block: $what should be $algo_like, is '$algo'"
            fi
            [ -z "$why" ] || break
        done <<'EOF'
SP-1 alltoall 64 65536 6 0.49727916 MPICH's_time pairwise*
SP-1 alltoall 1024 8 6 0.0052052 MPICH's_time brucks*
Paragon allgather 65536 8 6 4.920892192 MPICH's_time ring*
NDR alltoall 65536 8 8 1.24864e-05 auto's_time pairwise:k=65535
EOF
    fi
    if [ -z "$why" ]; then
        doc_copy=$LOGS/projections.md
        if ! cp docs/projections.md "$doc_copy" 2>>"$log"; then
            why="docs/projections.md cannot be read"
        elif ! "$project_bin" --update "$doc_copy" 2>>"$log"; then
            why="xchg-project --update failed: $(tail -c 300 "$log")"
        elif ! cmp -s docs/projections.md "$doc_copy"; then
            why="docs/projections.md is not what xchg-project prints now: run 'make projections' and check its text ($(diff docs/projections.md "$doc_copy" | head -3 | tr '\n' ' '))"
        fi
    fi
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
fi
