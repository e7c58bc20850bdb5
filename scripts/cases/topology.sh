# shellcheck shell=bash
# topology.sh: what a context knows of its communicator's layout (xchg_topo_t), sourced by
# run_tests.sh (begin_case, preloaded, summary_status, pass, fail, skip, rc_reason, $TESTS, $MPI,
# $LOGS).
#
#  - XCHG_NODES=3,1,2 at 6 ranks: coll_check passes, and XCHG_VERBOSE's line for the world-sized
#    communicators reports the emulated layout (3 nodes of 1..3 ranks), and no line says the
#    nodes came from MPI_Comm_split_type (every rank read its node key);
#  - XCHG_TEST_NO_NODE_KEY=1 at 4 ranks (rank 1 reads as if it lacked its node key): one line
#    "xchg: nodes found by MPI_Comm_split_type: rank 1 of 4 ...", and the world one node of 4;
#  - ranks that MPI calls one node but that see different /dev/shm directories (odd ranks in a
#    mount namespace of their own with a private tmpfs there, as containers with a private
#    /dev/shm have): coll_check at 4 ranks under auto and with node forced for all three
#    collectives passes, and the layout is 3 nodes ({0, 2} and one each for 1 and 3), so no
#    segment is shared between ranks that cannot open each other's. Open MPI only, as root
#    with unshare (MPICH 4.0.2 cannot run here without its own shared memory: over UCX's TCP
#    alone it hangs in MPI_Finalize natively, docs/cluster.md);
#  - XCHG_NODES that does not add up to the job's size: one message naming the variable, the
#    measured layout is used, the program passes;
#  - topo_check at 4 and 6 ranks: a periodic ring is reported as "ring of P", a periodic 2D
#    Cartesian communicator as "torus RxC" (MPI_Dims_create's dimensions), and the same shape
#    with one open dimension as neither.

# topo_run P PROGRAM VARS...: run PROGRAM preloaded; sets why (empty when it passed)
topo_run() {
    local p=$1 prog=$2
    shift 2
    preloaded "$log" "$p" XCHG_WAIT=yield "$@" -- "$TESTS/$prog"
    local rc=$? status
    status=$(summary_status "$log" "$prog")
    why=""
    if [ "$rc" -ne 0 ] || [ "$status" != pass ]; then
        why="the program did not pass ($(rc_reason "$rc"), summary $status)"
    fi
}

if [ -x "$TESTS/coll_check" ]; then
    name="XCHG_NODES=3,1,2 coll_check p=6"
    if begin_case "$name"; then
        topo_run 6 coll_check XCHG_NODES=3,1,2 XCHG_VERBOSE=1
        if [ -z "$why" ] && ! grep -aq '^xchg: communicator p=6: nodes=3 ranks per node 1\.\.3, consecutive' "$log"; then
            why="no 'xchg: communicator p=6: nodes=3 ranks per node 1..3, consecutive' line"
        elif [ -z "$why" ] && grep -aq '^xchg: nodes found by MPI_Comm_split_type' "$log"; then
            why="the nodes came from MPI_Comm_split_type although every rank has its node key: $(grep -a '^xchg: nodes found by' "$log" | head -n 1)"
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    fi
    name="XCHG_TEST_NO_NODE_KEY=1 coll_check p=4: the nodes from MPI_Comm_split_type"
    if begin_case "$name"; then
        topo_run 4 coll_check XCHG_TEST_NO_NODE_KEY=1 XCHG_VERBOSE=1
        n=$(grep -ac '^xchg: nodes found by MPI_Comm_split_type: rank 1 of 4 could not read its boot id or host name$' "$log")
        if [ -z "$why" ] && [ "$n" -ne 1 ]; then
            why="expected one 'xchg: nodes found by MPI_Comm_split_type: rank 1 of 4 ...' line, found $n"
        elif [ -z "$why" ] && ! grep -aq '^xchg: communicator p=4: nodes=1 ranks per node 4\.\.4, consecutive' "$log"; then
            why="no 'xchg: communicator p=4: nodes=1 ranks per node 4..4, consecutive' line"
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    fi
    for forced in auto node; do
        name="coll_check p=4, odd ranks with a private /dev/shm, $forced"
        begin_case "$name" || continue
        if [ "$MPI" != openmpi ] || [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
            skip "$name" "needs Open MPI, root and unshare -m"
            continue
        fi
        wrap=$LOGS/private-shm.sh
        cat >"$wrap" <<'WRAP'
#!/bin/sh
# odd ranks run in a mount namespace of their own with a private /dev/shm
r=${OMPI_COMM_WORLD_RANK:-0}
if [ $((r % 2)) = 1 ]; then
    exec unshare -m sh -c 'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$@"' sh "$@"
fi
exec "$@"
WRAP
        chmod +x "$wrap"
        vars=(XCHG_WAIT=yield XCHG_VERBOSE=1)
        [ "$forced" = node ] && vars+=(XCHG_ALLTOALL=node XCHG_ALLGATHER=node XCHG_ALLTOALLV=node XCHG_STRICT=1)
        preloaded "$log" 4 "${vars[@]}" -- "$wrap" "$TESTS/coll_check"
        rc=$?
        status=$(summary_status "$log" coll_check)
        why=""
        if [ "$rc" -ne 0 ] || [ "$status" != pass ]; then
            why="the program did not pass ($(rc_reason "$rc"), summary $status)"
        elif ! grep -aq '^xchg: communicator p=4: nodes=3 ranks per node 1\.\.2, interleaved' "$log"; then
            why="no 'xchg: communicator p=4: nodes=3 ranks per node 1..2, interleaved' line"
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    done
    name="XCHG_NODES=3,3 (adds up to 6) p=5"
    if begin_case "$name"; then
        topo_run 5 coll_check XCHG_NODES=3,3
        n=$(grep -ac '^xchg: XCHG_NODES=3,3: .*add up to 6.*5 ranks.*ignored' "$log")
        if [ -z "$why" ] && [ "$n" -ne 1 ]; then
            why="expected one 'xchg: XCHG_NODES=3,3: ... add up to 6 ... 5 ranks; ignored' line, found $n"
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    fi
fi

if [ -x "$TESTS/topo_check" ]; then
    for p in 4 6; do
        case $p in 4) shape="2x2" ;; 6) shape="3x2" ;; esac
        name="topo_check p=$p (ring, torus $shape, open mesh)"
        begin_case "$name" || continue
        topo_run "$p" topo_check XCHG_VERBOSE=1
        lines=$(grep -a "^xchg: communicator p=$p: " "$log")
        if [ -z "$why" ] && ! grep -q ", ring of $p\$" <<<"$lines"; then
            why="no 'xchg: communicator p=$p: ..., ring of $p' line"
        elif [ -z "$why" ] && ! grep -q ", torus $shape\$" <<<"$lines"; then
            why="no 'xchg: communicator p=$p: ..., torus $shape' line"
        elif [ -z "$why" ] && [ "$(grep -c -v ', ring of\|, torus ' <<<"$lines")" -lt 1 ]; then
            why="the communicator with an open dimension was taken for a ring or torus"
        fi
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    done
else
    fail "topo_check" "$TESTS/topo_check is not built"
fi
