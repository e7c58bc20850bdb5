# shellcheck shell=bash
# torus.sh: the all-port ring and torus complete exchange (torus) for MPI_Alltoall,
# sourced by run_tests.sh (begin_case, preloaded, check_launch, report_launch, summary_status,
# strict_line, stats_has, pass, fail, rc_reason, $TESTS).
#
#  - topo_check at 4, 6 and 8 ranks with MPI_Alltoall forced to torus: the periodic ring is
#    served as "torus [dims=P]" and the periodic 2D communicator (MPI_Dims_create, reorder 1) as
#    "torus [dims=RxC]" (2x2: AT2's corner case, 3x2: split, 4x2: AT2), both decisions "forced";
#    the communicator with an open dimension is not taken for a torus: its decision is a
#    fallback whose reason is "no torus shape". XCHG_STRICT=0 for that reason (under
#    XCHG_STRICT=1 the mesh's call fails, as it should); every byte is checked all the same;
#  - topo_check at 6 ranks with XCHG_TORUS=2x4: the topologies come first (dims=6, dims=3x2),
#    and the open mesh, a Cartesian communicator, is not given XCHG_TORUS's shape (only
#    communicators without a Cartesian topology are): "no torus shape";
#  - coll_check with XCHG_TORUS at 8 ranks (2x4, AT2; 8, the even ring AR, whose stage-2 relays
#    the plan receives in place), 6 (2x3, split) and 5 (a ring of 5, odd): coll_check's world
#    and dup communicators take the shape, its split and self ones (other sizes) fall back
#    (XCHG_STRICT=0); the stats must show "xchg: alltoall torus [dims=...]";
#  - radix_sort at 8 ranks with XCHG_TORUS=2x4 under XCHG_STRICT=1: its every MPI_Alltoall is on
#    MPI_COMM_WORLD, so torus serves all of them, strictly;
#  - XCHG_TORUS=3x: one message naming the variable, the program passes.

# torus_topo P SHAPE [VARS...]: topo_check forced to torus, verbose; sets why (empty: passed)
torus_topo() {
    local p=$1 shape=$2 decisions
    shift 2
    preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_VERBOSE=1 XCHG_STRICT=0 \
        XCHG_ALLTOALL=torus XCHG_ALLGATHER=circulant XCHG_ALLTOALLV=pairwise "$@" \
        -- "$TESTS/topo_check"
    local rc=$?
    why=""
    decisions=$(grep -a "^xchg: decide alltoall p=$p " "$log")
    if [ $rc -ne 0 ] || [ "$(summary_status "$log" topo_check)" != pass ]; then
        why="the program did not pass ($(rc_reason $rc), summary $(summary_status "$log" topo_check))"
    elif ! grep -q ": torus \[dims=$p\] (forced)\$" <<<"$decisions"; then
        why="the periodic ring was not served as 'torus [dims=$p] (forced)'"
    elif ! grep -q ": torus \[dims=$shape\] (forced)\$" <<<"$decisions"; then
        why="the periodic 2D communicator was not served as 'torus [dims=$shape] (forced)'"
    elif [ "$(grep -c 'fallback: forced torus cannot serve' <<<"$decisions")" -ne 1 ]; then
        why="expected one fallback (the communicator with an open dimension), found $(grep -c fallback <<<"$decisions")"
    elif ! stats_has "$log" alltoall "torus:dims=$p" || ! stats_has "$log" alltoall "torus:dims=$shape"; then
        why="no 'xchg: alltoall torus [dims=$p]' and '[dims=$shape]' stats lines"
    fi
}

if [ -x "$TESTS/topo_check" ]; then
    for run in 4:2x2 6:3x2 8:4x2; do
        p=${run%%:*}
        shape=${run#*:}
        name="torus topo_check p=$p (ring dims=$p, torus dims=$shape; open mesh refused)"
        begin_case "$name" || continue
        torus_topo "$p" "$shape"
        if [ -z "$why" ] && ! grep -a 'fallback: forced torus' "$log" | grep -q 'no torus shape'; then
            why="the open mesh's fallback does not say 'no torus shape'"
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    done
    name="torus topo_check p=6 XCHG_TORUS=2x4 (topologies first; the open mesh is Cartesian, not flat: no torus)"
    if begin_case "$name"; then
        torus_topo 6 3x2 XCHG_TORUS=2x4
        if [ -z "$why" ] && ! grep -a 'fallback: forced torus' "$log" | grep -q 'no torus shape'; then
            why="the open mesh's fallback does not say 'no torus shape': XCHG_TORUS was taken for a Cartesian communicator"
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    fi
    name="torus XCHG_TORUS=3x (bad value) topo_check p=4"
    if begin_case "$name"; then
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_TORUS=3x -- "$TESTS/topo_check"
        rc=$?
        n=$(grep -ac '^xchg: XCHG_TORUS=3x: expected RxC' "$log")
        if [ $rc -ne 0 ] || [ "$(summary_status "$log" topo_check)" != pass ]; then
            fail "$name" "the program did not pass ($(rc_reason $rc))" "$log"
        elif [ "$n" -ne 1 ]; then
            fail "$name" "expected one 'xchg: XCHG_TORUS=3x: expected RxC ...' line, found $n" "$log"
        else
            pass "$name" "$start"
        fi
    fi
else
    fail "torus topo_check" "$TESTS/topo_check is not built"
fi

if [ -x "$TESTS/coll_check" ]; then
    for run in 8:2x4 8:8 6:2x3 5:5; do
        p=${run%%:*}
        shape=${run#*:}
        name="torus coll_check p=$p XCHG_TORUS=$shape alltoall=torus"
        begin_case "$name" || continue
        preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=0 XCHG_TORUS="$shape" \
            XCHG_ALLTOALL=torus XCHG_ALLGATHER=circulant XCHG_ALLTOALLV=pairwise \
            -- "$TESTS/coll_check"
        check_launch $? "$log" coll_check "alltoall=torus:dims=$shape" allgather=circulant \
            alltoallv=pairwise
        report_launch "$name" "$start" "$log"
    done
else
    fail "torus coll_check" "$TESTS/coll_check is not built"
fi

if [ -x "$build_dir/apps/radix_sort" ]; then
    name="torus radix_sort p=8 XCHG_TORUS=2x4 alltoall=torus (strict)"
    if begin_case "$name"; then
        preloaded "$log" 8 XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_TORUS=2x4 \
            XCHG_ALLTOALL=torus -- "$build_dir/apps/radix_sort"
        rc=$?
        if line=$(strict_line "$log"); then
            fail "$name" "torus could not serve a call (XCHG_STRICT=1): $line" "$log"
        elif [ $rc -ne 0 ] || ! grep -aq '^radix_sort: OK' "$log"; then
            fail "$name" "$(rc_reason $rc), no 'radix_sort: OK'" "$log"
        elif ! stats_has "$log" alltoall torus:dims=2x4; then
            fail "$name" "no 'xchg: alltoall torus [dims=2x4]' stats line: it did not run" "$log"
        elif stats_lines "$log" alltoall | grep -qv ' torus \[dims=2x4\] '; then
            fail "$name" "an MPI_Alltoall was not served by torus: $(stats_lines "$log" alltoall | grep -v ' torus ' | head -n 1)" "$log"
        else
            pass "$name" "$start"
        fi
    fi
fi
