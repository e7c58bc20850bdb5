# shellcheck shell=bash
# 10-configs.sh: the MPI correctness programs under every configuration of tests/configs/*.conf,
# sourced by run_tests.sh after the unit tests (begin_case, preloaded, native, check_launch,
# report_launch, as_run, stats_has, strict_line, $TESTS, $build_dir). Every launch runs with
# the library preloaded, XCHG_WAIT=yield, XCHG_STATS=1 and XCHG_STRICT=1:
#
#  - coll_check at 1, 2, 3, 4, 5, 7 and 8 ranks once per configuration (the three collectives
#    zipped: launch i forces the i-th configuration of each, shorter lists padded with their own
#    forced configurations again, in turn); every forced algorithm must appear, with its
#    parameters as they run on that many ranks (as_run: values a communicator cannot use are
#    clamped), in the XCHG_STATS lines, so an algorithm that silently does not run fails;
#    under MPICH the launch that forces native for all three runs at 1 to 4 ranks and up to
#    the processing units, not beyond: there MPICH's own collectives poll, and coll_check's
#    calls took 9 to 18 s a launch at 5 to 8 ranks on 2 cores (Open MPI's run at every count);
#  - alltoallv_workloads the same way for every alltoallv configuration;
#  - the radix_sort app natively and with twophase and pairwise forced, at 1, 4 and 8 ranks.
#
# A configuration file holds lines "COLL SPEC" (COLL alltoall, allgather or alltoallv; P and
# SQRTP in SPEC stand for the rank count and ceil(sqrt) of it); a line of another form fails
# as "configs FILE:LINE", whatever XCHG_TEST_ONLY says.

RANKS=(1 2 3 4 5 7 8)

# the configurations: every "COLL SPEC" line of tests/configs/*.conf, in file and line order
conf_coll=()
conf_spec=()
for conf in tests/configs/*.conf; do
    [ -f "$conf" ] || continue
    lineno=0
    while IFS= read -r line || [ -n "$line" ]; do
        lineno=$((lineno + 1))
        line=${line%%#*}
        read -r coll spec extra <<<"$line"
        [ -z "${coll:-}" ] && continue
        case $coll in
        alltoall | allgather | alltoallv)
            if [ -n "${spec:-}" ] && [ -z "${extra:-}" ]; then
                conf_coll+=("$coll")
                conf_spec+=("$spec")
                continue
            fi
            ;;
        esac
        fail "configs $conf:$lineno" "not 'COLL SPEC' with COLL alltoall, allgather or alltoallv: '$line'"
    done <"$conf"
done

# ceil(sqrt(n)), at least 2
sqrt_up() {
    local s=1
    while [ $((s * s)) -lt "$1" ]; do s=$((s + 1)); done
    [ $s -lt 2 ] && s=2
    echo $s
}

# specs_for COLL P: the configurations of COLL with P and SQRTP substituted, duplicates removed
specs_for() {
    local coll=$1 p=$2 sq seen="" i spec
    sq=$(sqrt_up "$p")
    [ "$p" -lt 2 ] && p=2
    for i in "${!conf_coll[@]}"; do
        [ "${conf_coll[i]}" = "$coll" ] || continue
        spec=$(echo "${conf_spec[i]}" | sed -E "s/(^|[^A-Za-z0-9_])SQRTP([^A-Za-z0-9_]|$)/\1$sq\2/g; s/(^|[^A-Za-z0-9_])P([^A-Za-z0-9_]|$)/\1$p\2/g")
        case " $seen " in *" $spec "*) continue ;; esac
        seen="$seen $spec"
        echo "$spec"
    done
}

# spec_at I SPEC...: the I-th of a collective's specs; past the end, its forced xchg specs
# again in turn (auto if it has none). Native and auto have their own launches, and padding
# with them would cost seconds per launch where MPICH's own collectives busy-poll on
# oversubscribed cores.
spec_at() {
    local i=$1 spec
    local -a forced=()
    shift
    if [ "$i" -lt $# ]; then
        shift "$i"
        echo "$1"
        return
    fi
    for spec in "$@"; do
        case $spec in native | auto) ;; *) forced+=("$spec") ;; esac
    done
    if [ ${#forced[@]} -eq 0 ]; then echo auto; else echo "${forced[$(((i - $#) % ${#forced[@]}))]}"; fi
}

if [ -x "$TESTS/coll_check" ]; then
    for p in "${RANKS[@]}"; do
        mapfile -t a2a < <(specs_for alltoall "$p")
        mapfile -t ag < <(specs_for allgather "$p")
        mapfile -t a2av < <(specs_for alltoallv "$p")
        nlaunch=${#a2a[@]}
        [ ${#ag[@]} -gt "$nlaunch" ] && nlaunch=${#ag[@]}
        [ ${#a2av[@]} -gt "$nlaunch" ] && nlaunch=${#a2av[@]}
        for ((i = 0; i < nlaunch; i++)); do
            s1=$(spec_at "$i" "${a2a[@]}")
            s2=$(spec_at "$i" "${ag[@]}")
            s3=$(spec_at "$i" "${a2av[@]}")
            if [ "$MPI" = mpich ] && [ "$p" -gt 4 ] && [ "$p" -gt "$NPROC" ] &&
                [ "$s1 $s2 $s3" = "native native native" ]; then
                continue # MPICH's own collectives, polling: up to 18 s a launch (header)
            fi
            name="coll_check p=$p alltoall=$s1 allgather=$s2 alltoallv=$s3"
            begin_case "$name" || continue
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 \
                XCHG_ALLTOALL="$s1" XCHG_ALLGATHER="$s2" XCHG_ALLTOALLV="$s3" -- \
                "$TESTS/coll_check"
            check_launch $? "$log" coll_check "alltoall=$(as_run "$s1" "$p")" \
                "allgather=$(as_run "$s2" "$p")" "alltoallv=$(as_run "$s3" "$p")"
            report_launch "$name" "$start" "$log"
        done
    done
else
    fail "coll_check" "$TESTS/coll_check is not built"
fi

if [ -x "$TESTS/alltoallv_workloads" ]; then
    for p in "${RANKS[@]}"; do
        while IFS= read -r spec; do
            name="alltoallv_workloads p=$p alltoallv=$spec"
            begin_case "$name" || continue
            preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 \
                XCHG_ALLTOALLV="$spec" -- "$TESTS/alltoallv_workloads"
            check_launch $? "$log" alltoallv_workloads "alltoallv=$(as_run "$spec" "$p")"
            report_launch "$name" "$start" "$log"
        done < <(specs_for alltoallv "$p")
    done
fi

if [ -x "$build_dir/apps/radix_sort" ]; then
    for p in 1 4 8; do
        for spec in native-run twophase pairwise; do
            name="radix_sort p=$p $([ $spec = native-run ] && echo natively || echo "alltoallv=$spec")"
            begin_case "$name" || continue
            if [ $spec = native-run ]; then
                native "$log" "$p" -- "$build_dir/apps/radix_sort"
            else
                preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 \
                    XCHG_ALLTOALLV=$spec -- "$build_dir/apps/radix_sort"
            fi
            rc=$?
            if line=$(strict_line "$log"); then
                fail "$name" "a forced algorithm could not serve a call (XCHG_STRICT=1): $line" "$log"
            elif [ $rc -ne 0 ] || ! grep -aq '^radix_sort: OK' "$log"; then
                fail "$name" "$(rc_reason $rc), no 'radix_sort: OK'" "$log"
            elif [ $spec != native-run ] && ! stats_has "$log" alltoallv $spec; then
                fail "$name" "no 'xchg: alltoallv $spec' stats line: it did not run" "$log"
            else
                pass "$name" "$start"
            fi
        done
    done
fi
