# shellcheck shell=bash
# errors.sh: erroneous programs fail as natively and never hang (sourced by run_tests.sh, which
# provides begin_case, native, preloaded, pass, fail, strict_line, stats_has, specs_for, $TESTS
# and $LOGS).
#
# tests/mpi/errors_length.c (send and receive sizes that differ between ranks) and
# errors_alias.c (the send buffer is the receive buffer) make one erroneous call per case and
# print, per rank, its error class and how long it took, or that it did not return within
# ERRORS_DEADLINE seconds (the program then ends, and the next launch starts from the case
# after it: natively, MPICH and Open MPI leave the other ranks waiting in several cases). Each
# program runs at ERRORS_RANKS ranks:
#   - natively, the reference (every case must be reached, no data check may fail);
#   - preloaded under auto, and once per launch forcing one spec of every algorithm name of
#     tests/configs/*.conf for each collective (zipped as run_tests.sh zips them, native
#     included; XCHG_STRICT=1, and the stats must show every forced algorithm);
#   - preloaded with all three collectives forced to node across two emulated nodes
#     (XCHG_NODES=2,1), where the erroneous rank and a leader waiting for its node's data may
#     be on different nodes.
# Per case and rank, against the native run: a rank must return within the native time (the
# slowest native rank that returned, in that case) plus a second; a rank whose own arguments
# are wrong ("signature") or that receives a longer message than it asked for ("receiver")
# must get the native class, any other rank MPI_SUCCESS or the native class; where a rank did
# not return natively, any class will do. Under auto and forced native, which may hand a call to
# the MPI library, the cases where some rank did not return natively are left out (such a
# launch would only wait as the native one did). No data check may fail (a rank that succeeds
# gets every block from the ranks whose arguments are right, and nothing past its receive
# buffer changes).

ERRORS_RANKS=3
ERRORS_DEADLINE=1.5

# errors_launch LOG MODE PROG CASES [VAR=VALUE...]: the cases of PROG (CASES: names separated
# by spaces, or "all"), natively (MODE native) or preloaded, in as many launches as it takes;
# all their output in LOG. errors_stopped says why a launch stopped where no erroneous call
# explains it (it timed out, or a follow-up call did not return), else is empty.
errors_launch() {
    local log=$1 mode=$2 prog=$3 chosen=() next="" part last names=() i rc line
    [ "$4" != all ] && read -r -a chosen <<<"$4"
    shift 4
    mapfile -t names < <("$TESTS/$prog" --list)
    : >"$log"
    errors_stopped=""
    for ((part = 0; part <= ${#names[@]}; part++)); do
        local plog="$log.$part" args=(--deadline "$ERRORS_DEADLINE")
        [ -n "$next" ] && args+=(--from "$next")
        if [ "$mode" = native ]; then
            native "$plog" "$ERRORS_RANKS" -- "$TESTS/$prog" "${args[@]}" "${chosen[@]}"
        else
            preloaded "$plog" "$ERRORS_RANKS" "$@" -- "$TESTS/$prog" "${args[@]}" "${chosen[@]}"
        fi
        rc=$?
        if [ $rc -ge 124 ] && [ $rc -le 125 ] || [ $rc -eq 137 ]; then
            errors_stopped="a launch stopped: $(rc_reason $rc)"
        elif line=$(grep -a -m 1 -E "^$prog: case [a-z0-9_]+/follow-up rank [0-9]+: no return" "$plog"); then
            errors_stopped="the valid call after an erroneous one did not return: $line"
        fi
        cat "$plog" >>"$log"
        rm -f "$plog"
        grep -aqE "^$prog: [0-9]+ checks" "$log" && return 0
        [ -n "$errors_stopped" ] && return 0
        # stopped at a case where some rank did not return: go on after it
        last=$(grep -aoE "^$prog: case [a-z0-9_]+ " "$log" | tail -n 1 | awk '{print $3}')
        next=""
        for i in "${!names[@]}"; do
            [ "${names[i]}" = "$last" ] && next=${names[i + 1]:-}
        done
        [ -z "$next" ] && return 0
    done
}

# errors_results LOG PROG: "case rank class seconds role" for every rank that returned.
errors_results() {
    grep -aE "^$2: case [a-z0-9_]+ rank [0-9]+ role [a-z]+: class [0-9]+ " "$1" |
        sed -E 's/^[^:]+: case ([a-z0-9_]+) rank ([0-9]+) role ([a-z]+): class ([0-9]+) .* after ([0-9.]+) s$/\1 \2 \4 \5 \3/'
}

# errors_compare PROG NATIVE_LOG LOG CASES: sets why (empty when every rank of every case of
# CASES is as the header says).
errors_compare() {
    local prog=$1 c r k n x limit line
    local -A nclass xclass xtime xrole nlimit
    local names=()
    read -r -a names <<<"$4"
    while read -r c r k n x; do
        nclass[$c:$r]=$k
        limit=$(awk -v a="${nlimit[$c]:-0}" -v b="$n" 'BEGIN { print (b > a ? b : a) }')
        nlimit[$c]=$limit
    done < <(errors_results "$2" "$prog")
    while read -r c r k n x; do
        xclass[$c:$r]=$k
        xtime[$c:$r]=$n
        xrole[$c:$r]=$x
    done < <(errors_results "$3" "$prog")
    why=""
    if line=$(grep -a -m 1 '^FAIL \[' "$3"); then
        why="a data check failed: $line"
        return
    fi
    for c in "${names[@]}"; do
        for ((r = 0; r < ERRORS_RANKS; r++)); do
            k=$c:$r
            limit=$(awk -v a="${nlimit[$c]:-0}" 'BEGIN { print a + 1 }')
            if [ -z "${xclass[$k]:-}" ]; then
                why="case $c: rank $r did not return within $ERRORS_DEADLINE s (natively: ${nclass[$k]:+class }${nclass[$k]:-no return either})"
                return
            fi
            if awk -v t="${xtime[$k]}" -v l="$limit" 'BEGIN { exit !(t > l) }'; then
                why="case $c: rank $r returned after ${xtime[$k]} s, more than the native ${nlimit[$c]:-0} s plus a second"
                return
            fi
            [ -z "${nclass[$k]:-}" ] && continue
            if [ "${xclass[$k]}" != "${nclass[$k]}" ] &&
                { [ "${xrole[$k]}" != bystander ] || [ "${xclass[$k]}" != 0 ]; }; then
                why="case $c: rank $r (${xrole[$k]}) got class ${xclass[$k]}, natively ${nclass[$k]}"
                return
            fi
        done
    done
}

# errors_cases PROG NATIVE_LOG MAY_HANG: the cases of PROG to run in a launch where the
# collectives of MAY_HANG may hand a call to the MPI library (auto; forced to native): the cases
# of other collectives, and those where every rank returned natively (where some did not, the
# launch would only wait as the native one did).
errors_cases() {
    local c r out="" all
    for c in $("$TESTS/$1" --list); do
        all=1
        for ((r = 0; r < ERRORS_RANKS; r++)); do
            grep -aqE "^$1: case $c rank $r role " "$2" || all=0
        done
        [[ " $3 " == *" ${c%%_*} "* ]] && [ $all -eq 0 ] && continue
        out="$out $c"
    done
    echo "${out# }"
}

# errors_specs COLL: one configuration per algorithm name of tests/configs/*.conf (not auto).
errors_specs() {
    local seen=" " spec name
    while IFS= read -r spec; do
        name=${spec%%:*}
        [ "$name" = auto ] && continue
        case $seen in *" $name "*) continue ;; esac
        seen="$seen$name "
        echo "$spec"
    done < <(specs_for "$1" "$ERRORS_RANKS")
}

# errors_pick I SPEC...: the I-th spec; past the end, the others again in turn, native (first
# in tests/configs/base.conf) left out, so that only the first launch runs native everywhere.
errors_pick() {
    local i=$1
    shift
    if [ "$i" -lt $# ] || [ $# -lt 2 ]; then
        i=$((i % $#))
    else
        i=$((1 + (i - 1) % ($# - 1)))
    fi
    shift "$i"
    echo "$1"
}

# errors_mode PROG NAME [COLL=SPEC...]: one preloaded case of PROG against the native
# reference: auto when no COLL=SPEC is given, else each collective forced to its SPEC under
# XCHG_STRICT=1 (the stats must show every forced algorithm but native); NAME empty: one made
# from the specs. XCHG_NODES, when set in the caller's environment, is passed on and named.
errors_mode() {
    local prog=$1 name=$2 vars=(XCHG_WAIT=yield XCHG_STATS=1) forced=() may_hang pair coll cases
    shift 2
    forced=("$@")
    if [ ${#forced[@]} -eq 0 ]; then
        may_hang="alltoall allgather alltoallv"
    else
        may_hang=""
        for pair in "${forced[@]}"; do
            coll=${pair%%=*}
            vars+=("XCHG_${coll^^}=${pair#*=}")
            [ "${pair#*=}" = native ] && may_hang="$may_hang $coll"
        done
        vars+=(XCHG_STRICT=1)
        [ -n "$name" ] || name="$prog p=$ERRORS_RANKS ${forced[*]}"
    fi
    if [ -n "${XCHG_NODES:-}" ]; then
        vars+=("XCHG_NODES=$XCHG_NODES")
        name="$name XCHG_NODES=$XCHG_NODES"
    fi
    begin_case "$name" || return 0
    [ -s "$errors_native" ] || errors_launch "$errors_native" native "$prog" all
    cases=$(errors_cases "$prog" "$errors_native" "$may_hang")
    errors_launch "$log" preloaded "$prog" "$cases" "${vars[@]}"
    errors_compare "$prog" "$errors_native" "$log" "$cases"
    [ -z "$why" ] && why=$errors_stopped
    if [ -z "$why" ] && line=$(strict_line "$log"); then
        why="a forced algorithm could not serve a call (XCHG_STRICT=1): $line"
    fi
    for pair in "${forced[@]}"; do
        # native: as natively already; its launches may stop early, without statistics
        [ -n "$why" ] || [ "${pair#*=}" = native ] && continue
        stats_has "$log" "${pair%%=*}" "${pair#*=}" ||
            why="forced ${pair%%=*} to ${pair#*=}, but no stats line shows it ran"
    done
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
}

errors_a2a=() errors_ag=() errors_v=()
mapfile -t errors_a2a < <(errors_specs alltoall)
mapfile -t errors_ag < <(errors_specs allgather)
mapfile -t errors_v < <(errors_specs alltoallv)
errors_nmodes=${#errors_a2a[@]}
[ ${#errors_ag[@]} -gt "$errors_nmodes" ] && errors_nmodes=${#errors_ag[@]}
[ ${#errors_v[@]} -gt "$errors_nmodes" ] && errors_nmodes=${#errors_v[@]}

for errors_prog in errors_length errors_alias; do
    if [ ! -x "$TESTS/$errors_prog" ]; then
        fail "$errors_prog" "$TESTS/$errors_prog is not built"
        continue
    fi
    errors_native=$LOGS/$errors_prog-native.reference
    rm -f "$errors_native"

    # the reference: natively, every case reached, no data check failed
    name="$errors_prog p=$ERRORS_RANKS natively (the reference)"
    if begin_case "$name"; then
        errors_launch "$errors_native" native "$errors_prog" all
        cp "$errors_native" "$log"
        why=""
        mapfile -t errors_names < <("$TESTS/$errors_prog" --list)
        for c in "${errors_names[@]}"; do
            grep -aqE "^$errors_prog: case $c rank " "$log" || why="case $c was never reached"
        done
        line=$(grep -a -m 1 '^FAIL \[' "$log") && why="a data check failed natively: $line"
        [ -n "$errors_stopped" ] && why="natively, $errors_stopped"
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    fi

    for ((i = -1; i < errors_nmodes; i++)); do
        if [ $i -lt 0 ]; then
            errors_mode "$errors_prog" "$errors_prog p=$ERRORS_RANKS auto"
        else
            errors_mode "$errors_prog" "" "alltoall=$(errors_pick $i "${errors_a2a[@]}")" \
                "allgather=$(errors_pick $i "${errors_ag[@]}")" \
                "alltoallv=$(errors_pick $i "${errors_v[@]}")"
        fi
    done
    # the node algorithms across two emulated nodes (2 ranks and 1): a rank's wrong count or
    # aliased buffers must not leave the other node's leader waiting
    XCHG_NODES=2,1 errors_mode "$errors_prog" "" alltoall=node allgather=node alltoallv=node
done
