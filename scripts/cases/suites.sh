# shellcheck shell=bash
# suites.sh: tests/mpi/suites_check.c, what MPICH's coll tests, OSU with -c and IMB with -check
# cover beyond coll_check (intercommunicators and a merged one, datatypes with negative lower
# bounds, an extent of 2 GiB, a sweep of every power of two up to 1 MiB a block with the same
# buffers again and again, subsets of MPI_COMM_WORLD with idle ranks). Sourced by run_tests.sh
# (begin_case, native, preloaded, check_launch, report_launch, $TESTS), after errors.sh, whose
# errors_specs and errors_pick give the configurations: one spec of every algorithm name of
# tests/configs/*.conf per collective, zipped, native first.
# Natively (the program must pass there too), under auto, and once per zipped configuration
# but the one that forces native everywhere (XCHG_STRICT=1, the stats must show each forced
# algorithm): the parts "inter negative huge
# subsets" at 3 ranks and "sweep" at 2 (MPICH's own collectives are slow with more ranks than
# cores, and the sweep is mostly large messages).

if [ -x "$TESTS/suites_check" ] && declare -F errors_pick >/dev/null; then
    for suites_part in "3 inter negative huge subsets" "2 sweep"; do
        read -r suites_n suites_args <<<"$suites_part"
        name="suites_check p=$suites_n $suites_args natively"
        if begin_case "$name"; then
            # shellcheck disable=SC2086
            native "$log" "$suites_n" -- "$TESTS/suites_check" $suites_args
            check_launch $? "$log" suites_check
            report_launch "$name" "$start" "$log"
        fi
        for ((i = -1; i < errors_nmodes; i++)); do
            vars=(XCHG_WAIT=yield XCHG_STATS=1)
            forced=()
            if [ $i -ge 0 ]; then
                forced=("alltoall=$(errors_pick $i "${errors_a2a[@]}")"
                    "allgather=$(errors_pick $i "${errors_ag[@]}")"
                    "alltoallv=$(errors_pick $i "${errors_v[@]}")")
                vars+=(XCHG_STRICT=1 "XCHG_ALLTOALL=${forced[0]#*=}"
                    "XCHG_ALLGATHER=${forced[1]#*=}" "XCHG_ALLTOALLV=${forced[2]#*=}")
            fi
            # native everywhere is the native launch again (errors.sh needs it, this does not)
            [[ " ${forced[*]} " == *"alltoall=native allgather=native alltoallv=native"* ]] && continue
            name="suites_check p=$suites_n $suites_args ${forced[*]:-auto}"
            begin_case "$name" || continue
            # shellcheck disable=SC2086
            preloaded "$log" "$suites_n" "${vars[@]}" -- "$TESTS/suites_check" $suites_args
            check_launch $? "$log" suites_check "${forced[@]}"
            report_launch "$name" "$start" "$log"
        done
    done
else
    fail "suites_check" "$TESTS/suites_check is not built, or errors.sh (its configurations) was not sourced"
fi
