# shellcheck shell=bash
# 20-behaviour.sh: how the library behaves besides running algorithms, sourced by run_tests.sh
# after the configurations (begin_case, preloaded, native, check_launch, report_launch,
# summary_status, stats_lines, line_is_spec, stats_has, pass, fail, rc_reason, $TESTS, $LOGS):
#
#  - bad XCHG_* values (one message each, on rank 0, naming the variable), XCHG_DISABLE (not
#    even statistics), XCHG_VERBOSE (decisions with their reason);
#  - the Fortran programs (their calls intercepted: stats for all three collectives), on the
#    MPIs of FORTRAN_MPIS;
#  - errors_check natively and preloaded, comm_churn, large_count at 1 and 2 ranks;
#  - XCHG_TUNING with a missing file and with a malformed line (each reported once, the program
#    runs on), and auto under tables that name one algorithm for every call (radix, circulant,
#    pairwise; then hier, which carries alltoallv's statistics; then native): the XCHG_STATS
#    lines must show exactly the table's algorithms (table_case).

FORTRAN_MPIS="mpich openmpi" # MPIs on which the Fortran programs run

# Bad values: one message per bad variable, on rank 0 only, naming the variable; auto is used.
if [ -x "$TESTS/coll_check" ]; then
    name="bad values (XCHG_ALLTOALL=bogus XCHG_ALLGATHER=circulant:zz=1 XCHG_ALLTOALLV=pairwise:k=abc) p=3"
    if begin_case "$name"; then
        preloaded "$log" 3 XCHG_WAIT=yield XCHG_STATS=1 XCHG_ALLTOALL=bogus \
            XCHG_ALLGATHER=circulant:zz=1 XCHG_ALLTOALLV=pairwise:k=abc -- "$TESTS/coll_check"
        rc=$?
        why=""
        for pair in XCHG_ALLTOALL=bogus XCHG_ALLGATHER=circulant:zz=1 XCHG_ALLTOALLV=pairwise:k=abc; do
            var=${pair%%=*}
            n=$(grep -ac "$var=" "$log")
            if [ "$n" -ne 1 ]; then
                why="$why; $n lines name $var (expected exactly 1)"
            elif ! grep -aq "^xchg: $pair" "$log"; then
                why="$why; the message about $var does not start with 'xchg: $pair'"
            fi
        done
        if ! grep -aq "^xchg: XCHG_ALLTOALL=bogus.*valid" "$log"; then
            why="$why; the message about XCHG_ALLTOALL=bogus does not list the valid choices"
        fi
        status=$(summary_status "$log" coll_check)
        [ "$rc" -ne 0 ] || [ "$status" != pass ] && why="$why; the program did not pass ($(rc_reason $rc), summary $status)"
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "${why#; }" "$log"; fi
    fi

    # XCHG_DISABLE=1: a pure pass-through, not even statistics.
    name="XCHG_DISABLE=1 XCHG_STATS=1 p=3"
    if begin_case "$name"; then
        preloaded "$log" 3 XCHG_DISABLE=1 XCHG_STATS=1 -- "$TESTS/coll_check"
        check_launch $? "$log" coll_check
        if [ "$outcome" = pass ] && grep -aq '^xchg:' "$log"; then
            outcome=fail
            why="'xchg:' lines although disabled: $(grep -a '^xchg:' "$log" | head -n 1)"
        fi
        report_launch "$name" "$start" "$log"
    fi

    # XCHG_VERBOSE=1: decisions, with the reason (forced for alltoall, auto for the others).
    name="XCHG_VERBOSE=1 XCHG_ALLTOALL=pairwise p=2"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_STRICT=1 XCHG_ALLTOALL=pairwise -- \
            "$TESTS/coll_check"
        check_launch $? "$log" coll_check
        if [ "$outcome" = pass ]; then
            decide='^xchg: decide %s p=[0-9]+ block=[0-9]+: %s \[[^]]*\] \((%s)\)'
            # shellcheck disable=SC2059
            if ! grep -aqE "$(printf "$decide" alltoall pairwise forced)" "$log"; then
                outcome=fail
                why="no 'xchg: decide alltoall p=2 block=B: pairwise [...] (forced)' line"
            fi
            for coll in allgather alltoallv; do
                # shellcheck disable=SC2059
                if ! grep -aqE "$(printf "$decide" $coll '[a-z0-9_]+' 'model|table [^)]*|fallback: [^)]*')" "$log"; then
                    outcome=fail
                    why="no 'xchg: decide $coll p=2 block=B: NAME [...] (model|table ...|fallback: ...)' line"
                fi
            done
        fi
        report_launch "$name" "$start" "$log"
    fi
fi

# Fortran: every fortran_* program, its calls intercepted (stats for all three collectives).
case " $FORTRAN_MPIS " in
*" $MPI "*)
    for t in "$TESTS"/fortran_*; do
        [ -x "$t" ] || continue
        prog=$(basename "$t")
        for p in 1 3; do
            name="$prog p=$p (intercepted)"
            begin_case "$name" || continue
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 -- "$t"
            check_launch $? "$log" "$prog"
            if [ "$outcome" = pass ]; then
                for coll in alltoall allgather alltoallv; do
                    if ! grep -aqE "^xchg: $coll [a-z0-9_]+ \[[^]]*\] calls=[1-9]" "$log"; then
                        outcome=fail
                        why="no 'xchg: $coll NAME [...] calls=N' stats line: its $coll calls were not intercepted"
                    fi
                done
            fi
            report_launch "$name" "$start" "$log"
        done
    done
    ;;
*)
    echo "(the Fortran programs are not run on $MPI yet)"
    ;;
esac

# errors_check natively and preloaded.
if [ -x "$TESTS/errors_check" ]; then
    for mode in natively preloaded; do
        name="errors_check p=3 $mode"
        begin_case "$name" || continue
        if [ $mode = natively ]; then
            native "$log" 3 -- "$TESTS/errors_check"
        else
            preloaded "$log" 3 XCHG_WAIT=yield -- "$TESTS/errors_check"
        fi
        check_launch $? "$log" errors_check
        report_launch "$name" "$start" "$log"
    done
else
    fail "errors_check" "$TESTS/errors_check is not built"
fi

# comm_churn: thousands of communicators, memory flat.
if [ -x "$TESTS/comm_churn" ]; then
    name="comm_churn p=4"
    if begin_case "$name"; then
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_STATS=1 -- "$TESTS/comm_churn"
        check_launch $? "$log" comm_churn
        report_launch "$name" "$start" "$log"
    fi
else
    fail "comm_churn" "$TESTS/comm_churn is not built"
fi

# large_count: buffers above 2^31 bytes (skipped by the program itself without the memory).
if [ -x "$TESTS/large_count" ]; then
    for p in 1 2; do
        name="large_count p=$p"
        begin_case "$name" || continue
        preloaded "$log" "$p" XCHG_STATS=1 -- "$TESTS/large_count"
        check_launch $? "$log" large_count
        report_launch "$name" "$start" "$log"
    done
else
    fail "large_count" "$TESTS/large_count is not built"
fi

# table_case NAME RULE...: coll_check at 4 ranks, auto (nothing forced), under a tuning table
# of the rules "COLLECTIVE PROCS BYTES SPEC", which between them name an algorithm for every
# call. A table rule is obeyed as it is (neither the models nor learning override it), so
# every XCHG_STATS line of a collective must be the SPEC (name and every KEY=VALUE) of one of
# its rules, and every rule must show up in some line. The stats lines merge all communicators
# (world, reversed and dup of 4 ranks, the split's 3 and 1 ranks, MPI_COMM_SELF), so they
# cannot tell a 4-rank call from a 1-rank one: the rules cover every size, and where a
# parameter cannot run as given on 1 rank (k of pairwise and circulant is clamped to 1 .. p-1,
# see as_run), the table gives 1-rank communicators a rule of their own with the value that
# runs there; nothing else may differ. The table must load without a complaint.
table_env=() # extra VAR=VALUE for the next table_case runs
table_case() {
    local name=$1 table line rule coll found fields
    shift
    begin_case "$name" || return 0
    table=$LOGS/$(echo "$name" | tr -c 'A-Za-z0-9=.,:_-' '_' | cut -c1-100).table
    printf '%s\n' 'xchg-tuning 1' "# $name" "$@" >"$table"
    preloaded "$log" 4 XCHG_WAIT=yield XCHG_STATS=1 XCHG_TUNING="$table" "${table_env[@]}" \
        -- "$TESTS/coll_check"
    check_launch $? "$log" coll_check
    if [ "$outcome" = pass ] && line=$(grep -a -m 1 -F "$table" "$log"); then
        outcome=fail
        why="the library complained about the table: $line"
    fi
    # every stats line of a collective the table names is one of its rules' specs
    for coll in alltoall allgather alltoallv; do
        while IFS= read -r line; do
            [ "$outcome" = pass ] || break
            found=0
            for rule in "$@"; do
                read -r -a fields <<<"$rule"
                [ "${fields[0]}" = "$coll" ] && line_is_spec "$line" "${fields[3]}" && found=1
            done
            if [ $found -eq 0 ]; then
                outcome=fail
                why="the table decides every $coll call, but a stats line is none of its rules: $line"
            fi
        done < <(stats_lines "$log" "$coll")
    done
    # and every rule decided some call
    for rule in "$@"; do
        [ "$outcome" = pass ] || break
        read -r -a fields <<<"$rule"
        if ! stats_has "$log" "${fields[0]}" "${fields[3]}"; then
            outcome=fail
            why="no stats line of the rule '$rule': it decided no call"
        fi
    done
    report_launch "$name" "$start" "$log"
}

# XCHG_TUNING: a missing file and a file with a malformed line, each reported once; the
# program runs on. Then auto under tables that decide every call.
if [ -x "$TESTS/coll_check" ]; then
    missing=$LOGS/no-such-dir/missing.table
    name="XCHG_TUNING=missing file p=2"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_WAIT=yield XCHG_TUNING="$missing" -- "$TESTS/coll_check"
        rc=$?
        status=$(summary_status "$log" coll_check)
        n=$(grep -ac "$missing" "$log")
        if [ "$rc" -ne 0 ] || [ "$status" != pass ]; then
            fail "$name" "the program did not pass ($(rc_reason $rc), summary $status)" "$log"
        elif [ "$n" -ne 1 ] || ! grep -aq "^xchg: XCHG_TUNING=$missing" "$log"; then
            fail "$name" "expected exactly one line 'xchg: XCHG_TUNING=$missing: ...', found $n naming the file" "$log"
        else
            pass "$name" "$start"
        fi
    fi

    table=$LOGS/malformed.table
    printf '%s\n' 'xchg-tuning 1' '# a good rule, then a malformed one on line 4' \
        'alltoall * 0-* native' 'alltoall 2-x 0-511 pairwise' >"$table"
    name="XCHG_TUNING=malformed line 4 p=2"
    if begin_case "$name"; then
        preloaded "$log" 2 XCHG_WAIT=yield XCHG_VERBOSE=1 XCHG_TUNING="$table" -- "$TESTS/coll_check"
        rc=$?
        status=$(summary_status "$log" coll_check)
        n=$(grep -ac "^xchg: $table:" "$log")
        if [ "$rc" -ne 0 ] || [ "$status" != pass ]; then
            fail "$name" "the program did not pass ($(rc_reason $rc), summary $status)" "$log"
        elif [ "$n" -ne 1 ] || ! grep -aq "^xchg: $table:4: " "$log"; then
            fail "$name" "expected exactly one line 'xchg: $table:4: ...', found $n reporting the file" "$log"
        elif ! grep -aqE "^xchg: decide alltoall p=2 block=[0-9]+: native \[\] \(table $table:3\)" "$log"; then
            fail "$name" "the good rule on line 3 (alltoall native) did not decide: no '(table $table:3)' decision" "$log"
        else
            pass "$name" "$start"
        fi
    fi

    table_case "XCHG_TUNING=every call named (radix:r=2, circulant:k=2, pairwise:k=2) p=4" \
        'alltoall * * radix:r=2' \
        'allgather 1 * circulant:k=1' 'allgather 2-* * circulant:k=2' \
        'alltoallv 1 * pairwise:k=1' 'alltoallv 2-* * pairwise:k=2'
    # hier from a table: an alltoallv decided from carried statistics, one call in 8 carrying
    table_case "XCHG_TUNING=hier for alltoall and alltoallv (carrying statistics) p=4" \
        'alltoall * * hier' 'allgather * * ring' 'alltoallv * * hier'
    # shm from a table: an alltoallv decided from the statistics shm carries in every call,
    # which XCHG_STRICT checks against an agreement call by call (small messages share the
    # header's line, larger ones do not: both layouts)
    table_env=(XCHG_STRICT=1)
    table_case "XCHG_TUNING=shm for every call, carried statistics checked (XCHG_STRICT) p=4" \
        'alltoall * * shm' 'allgather * * shm' 'alltoallv * * shm'
    table_env=()
    table_case "XCHG_TUNING=native for every call p=4" \
        'alltoall * * native' 'allgather * * native' 'alltoallv * * native'
fi
