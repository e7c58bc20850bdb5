# shellcheck shell=bash
# cluster.sh: xchg on an emulated cluster of this machine (scripts/cluster: network namespaces
# as nodes, rate-limited virtual links), sourced by run_tests.sh (which provides begin_case,
# run_logged, check_launch, report_launch, summary_status, pass, fail, skip, rc_reason, $TESTS,
# $LOGS, $MPI, $LIB and $root).
#
#  - per layout (3,2,1, then 1,4, then 2,2,2,2 ranks per node; star, links of 1 Gbit/s):
#    node_layout preloaded with XCHG_VERBOSE=1 under a tuning table whose first rules hold only
#    for communicators of that size spanning that many nodes (nodes=K): MPI must report the
#    layout asked for (node_layout --expect: every rank on its node, node by node), the library
#    must say "xchg: communicator p=P: nodes=K ranks per node MIN..MAX" and decide the world's
#    MPI_Alltoall and MPI_Allgather by those rules, and its machine line measured at MPI_Init
#    must take one link per node (inject=1) where a start-up between nodes costs twice one
#    inside or more, and none otherwise (cluster_link_check); then coll_check and alltoallv_workloads with
#    XCHG_STRICT=1 XCHG_STATS=1, auto and forced algorithms (every forced one must show in the
#    stats lines), checked as the rest of the suite checks them (check_launch). Open MPI runs
#    every configuration on every layout; MPICH, whose own collectives busy-poll with more ranks
#    than cores, one per layout;
#  - the links limit: node_layout's ping-pong between nodes of 3,2,1 at 100 Mbit/s must run at
#    50 to 105 % of the rate (shared memory bypassing the link would be far faster) and inside a
#    node at least three times faster; on a ring of 4 nodes at 100 Mbit/s, the ping-pong
#    between the non-neighbours 0 and 2 must run at the rate too and its bytes must cross node
#    1's links (xl0 received and xl2 sent at least what the ping-pong sent that way);
#  - afterwards the cluster is torn down (also when the suite is interrupted) and a last case
#    checks that nothing is left: no namespace xcn*, no interface xcbr0 or xcm*, no
#    /etc/netns/xcn*, no /etc/hosts line of the cluster.
# Every launch goes through scripts/xchgrun --nodes (--keep: the cluster is built once per
# shape and reused), with XCHG_CLUSTER_HELD=1: these cases hold the cluster session lock
# (/run/lock/xchg-cluster.session) from the first to the last. An MPICH launch that hangs in
# MPI_Finalize (MPICH 4.0.2 over UCX/TCP) is ended by xchgrun's finalize guard and passes; a
# closing line counts them. SKIP (every case, with the reason) when this machine cannot run the
# cluster (not root, no network namespaces, veth, bridge or tbf: scripts/cluster check) or
# another session holds the cluster for 10 minutes.

cluster_layouts=("3,2,1" "1,4" "2,2,2,2")
cluster_link=1gbit
cluster_slow_link=100mbit
cluster_slow_bytes=12500000 # 100 Mbit/s in bytes per second
cluster_ring=4
cluster_pingpong=4194304
cluster_script=$root/scripts/cluster

# The forced configurations "ALLTOALL ALLGATHER ALLTOALLV" of coll_check and the alltoallv
# specs of alltoallv_workloads, per layout index: every one on Open MPI, the index-th on MPICH.
cluster_coll_specs=("hier circulant twophase" "auto auto auto" "radix ring pairwise")
cluster_v_specs=("twophase" "auto" "pairwise")

# cluster_launch LOG NODES LINK SHAPE [--native] [VAR=VALUE...] -- PROGRAM [ARGS]: PROGRAM on
# the cluster, preloaded (or natively), under the suite's time limit.
cluster_launch() {
    local log=$1 nodes=$2 link=$3 shape=$4 native=() vars=()
    shift 4
    if [ "${1:-}" = --native ]; then
        native=(--native)
        shift
    fi
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    # shellcheck disable=SC2086 # SHAPE is "star" or "ring N"
    run_logged "$log" env "${vars[@]}" XCHG_LIB="$LIB" XCHG_CLUSTER_HELD=1 \
        "$root/scripts/xchgrun" --mpi="$MPI" --nodes "$nodes" --link "$link" --shape $shape \
        --keep "${native[@]}" "$@"
}

# Sum of a comma-separated list; its length.
cluster_sum() { echo $(($(echo "$1" | tr ',' '+'))); }
cluster_count() { echo "$1" | tr ',' '\n' | wc -l; }

# A node's interface byte counter: NODE DEV tx|rx.
cluster_bytes() {
    ip netns exec "$1" cat "/sys/class/net/$2/statistics/${3}_bytes" 2>/dev/null || echo 0
}

# The names of this file's cases, in order (for the filter and the skip lines).
cluster_case_names() {
    local i n layout set
    for ((i = 0; i < ${#cluster_layouts[@]}; i++)); do
        layout=${cluster_layouts[i]}
        echo "cluster nodes=$layout node layout (MPI and xchg)"
        for ((n = 0; n < ${#cluster_coll_specs[@]}; n++)); do
            [ "$MPI" = mpich ] && [ $n -ne $i ] && continue
            read -r -a set <<<"${cluster_coll_specs[n]}"
            echo "cluster nodes=$layout coll_check alltoall=${set[0]} allgather=${set[1]} alltoallv=${set[2]}"
        done
        for ((n = 0; n < ${#cluster_v_specs[@]}; n++)); do
            [ "$MPI" = mpich ] && [ $n -ne $i ] && continue
            [ "$MPI" = openmpi ] && [ "${cluster_v_specs[n]}" = pairwise ] && continue
            echo "cluster nodes=$layout alltoallv_workloads alltoallv=${cluster_v_specs[n]}"
        done
    done
    echo "cluster nodes=3,2,1 link=$cluster_slow_link ping-pong between and inside nodes"
    echo "cluster ring $cluster_ring link=$cluster_slow_link ping-pong 0<->2 through node 1"
    echo "cluster torn down: no namespace, interface or hosts entry left"
}

# Tear the cluster down (once); the EXIT/INT/TERM traps call it too.
cluster_torn=1
cluster_teardown() {
    [ $cluster_torn -eq 1 ] && return 0
    cluster_torn=1
    "$cluster_script" down >/dev/null 2>&1
}

# What the cluster left behind, one item per line (nothing when it left nothing).
cluster_leftovers() {
    ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E '^xcn[0-9]+$' | sed 's/^/namespace /'
    ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' |
        grep -E '^(xcbr0|xcm[0-9]+)$' | sed 's/^/interface /'
    find /etc/netns -maxdepth 1 -name 'xcn[0-9]*' 2>/dev/null | sed 's/^/file /'
    grep -F '# xchg-cluster' /etc/hosts 2>/dev/null | sed 's/^/hosts line /'
}

# One layout's node_layout case: MPI's layout and the library's.
cluster_layout_case() { # LAYOUT
    local layout=$1 name p nodes table lo hi why=""
    name="cluster nodes=$layout node layout (MPI and xchg)"
    begin_case "$name" || return 0
    p=$(cluster_sum "$layout")
    nodes=$(cluster_count "$layout")
    lo=$(echo "$layout" | tr ',' '\n' | sort -n | head -n 1)
    hi=$(echo "$layout" | tr ',' '\n' | sort -n | tail -n 1)
    table=$LOGS/cluster_layout_$nodes.table
    printf '%s\n' 'xchg-tuning 2' "alltoall $p nodes=$nodes * pairwise:k=1" \
        "allgather $p nodes=$nodes * ring" 'alltoall * * native' 'allgather * * native' >"$table"
    cluster_launch "$log" "$layout" "$cluster_link" star XCHG_WAIT=yield XCHG_VERBOSE=1 \
        XCHG_TUNING="$table" -- "$TESTS/node_layout" --expect "$layout"
    local rc=$? status
    status=$(summary_status "$log" node_layout)
    if [ $rc -ne 0 ] || [ "$status" != pass ]; then
        why="the program did not pass ($(rc_reason $rc), summary $status)"
    elif ! grep -aq "^node_layout: nodes=$nodes sizes=$layout\$" "$log"; then
        why="MPI did not report $nodes nodes of $layout ranks: $(grep -a '^node_layout: nodes=' "$log")"
    elif ! grep -aq "^xchg: communicator p=$p: nodes=$nodes ranks per node $lo\.\.$hi" "$log"; then
        why="no 'xchg: communicator p=$p: nodes=$nodes ranks per node $lo..$hi' line: the library sees another layout ($(grep -a '^xchg: communicator' "$log" | head -n 1))"
    elif ! grep -aqE "^xchg: decide alltoall p=$p block=[0-9]+: pairwise \[k=1\] \(table $table:2\)" "$log" ||
        ! grep -aqE "^xchg: decide allgather p=$p block=[0-9]+: ring \[\] \(table $table:3\)" "$log"; then
        why="the world's calls were not decided by the rules for $p ranks on nodes=$nodes ($table lines 2 and 3)"
    elif grep -aq "^xchg: $table" "$log"; then
        why="the library complained about the table: $(grep -a "^xchg: $table" "$log" | head -n 1)"
    else
        why=$(cluster_link_check "$log")
    fi
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
}

# The calibration's link per node (shim/calibrate.c): on the machine line that XCHG_VERBOSE
# prints, measured now, inject=1 where a start-up between nodes costs at least twice one inside
# (a network: the emulated links), else inject=0 (one level: rank 0's node holds no other rank).
# Prints why not, or nothing.
cluster_link_check() { # LOG
    local line
    line=$(grep -a '^xchg: cache .* machine beta=.*(measured now)' "$1" | head -n 1)
    [ -n "$line" ] || {
        echo "no machine line measured now: $(grep -a 'machine beta=' "$1" | head -n 1)"
        return
    }
    echo "$line" | awk '{
        for (i = 1; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == "beta" || kv[1] == "beta_inter" || kv[1] == "inject") {
                sub(/s$/, "", kv[2]); v[kv[1]] = kv[2] + 0; seen[kv[1]] = 1
            }
        }
        want = (v["beta"] > 0 && v["beta_inter"] > 0 && v["beta_inter"] >= 2 * v["beta"]) ? 1 : 0
        if (!seen["inject"])
            print "the machine line names no inject: " $0
        else if (v["inject"] != want)
            printf "inject=%d where beta=%g and beta_inter=%g want inject=%d\n", v["inject"], v["beta"], v["beta_inter"], want
    }'
}

# coll_check with ALLTOALL ALLGATHER ALLTOALLV forced (auto: nothing forced) on LAYOUT.
cluster_coll_case() { # LAYOUT ALLTOALL ALLGATHER ALLTOALLV
    local layout=$1 name
    name="cluster nodes=$layout coll_check alltoall=$2 allgather=$3 alltoallv=$4"
    begin_case "$name" || return 0
    cluster_launch "$log" "$layout" "$cluster_link" star XCHG_WAIT=yield XCHG_STATS=1 \
        XCHG_STRICT=1 XCHG_ALLTOALL="$2" XCHG_ALLGATHER="$3" XCHG_ALLTOALLV="$4" -- \
        "$TESTS/coll_check"
    check_launch $? "$log" coll_check "alltoall=$2" "allgather=$3" "alltoallv=$4"
    report_launch "$name" "$start" "$log"
}

cluster_v_case() { # LAYOUT SPEC
    local layout=$1 name
    name="cluster nodes=$layout alltoallv_workloads alltoallv=$2"
    begin_case "$name" || return 0
    cluster_launch "$log" "$layout" "$cluster_link" star XCHG_WAIT=yield XCHG_STATS=1 \
        XCHG_STRICT=1 XCHG_ALLTOALLV="$2" -- "$TESTS/alltoallv_workloads"
    check_launch $? "$log" alltoallv_workloads "alltoallv=$2"
    report_launch "$name" "$start" "$log"
}

# The ping-pong rate of KIND (inter-node or intra-node) in LOG, in bytes per second.
cluster_rate() { # LOG KIND
    grep -a "^node_layout: pingpong $2 " "$1" | sed -nE 's/.*, ([0-9.]+) MB\/s each way.*/\1/p' |
        awk 'NR == 1 { printf "%.0f", $1 * 1e6 }'
}

# Is RATE within 50..105 % of the slow link's? (prints why not)
cluster_rate_wrong() { # RATE WHAT
    if [ -z "$1" ]; then
        echo "no $2 ping-pong line"
    elif [ "$1" -lt $((cluster_slow_bytes / 2)) ] || [ "$1" -gt $((cluster_slow_bytes * 105 / 100)) ]; then
        echo "$2 ping-pong at $1 B/s, not within 50..105 % of the link's $cluster_slow_bytes B/s"
    fi
}

cluster_star_rate_case() {
    local name="cluster nodes=3,2,1 link=$cluster_slow_link ping-pong between and inside nodes"
    begin_case "$name" || return 0
    cluster_launch "$log" 3,2,1 "$cluster_slow_link" star --native -- "$TESTS/node_layout" \
        --expect 3,2,1 --pingpong "$cluster_pingpong" --reps 2
    local rc=$? status inter intra why=""
    status=$(summary_status "$log" node_layout)
    inter=$(cluster_rate "$log" inter-node)
    intra=$(cluster_rate "$log" intra-node)
    if [ $rc -ne 0 ] || [ "$status" != pass ]; then
        why="the program did not pass ($(rc_reason $rc), summary $status)"
    elif why=$(cluster_rate_wrong "$inter" inter-node) && [ -n "$why" ]; then
        :
    elif [ -z "$intra" ] || [ "$intra" -lt $((3 * inter)) ]; then
        why="the intra-node ping-pong (${intra:-no line} B/s) is not three times the inter-node one ($inter B/s): is the node's memory shared?"
    fi
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
}

cluster_ring_rate_case() {
    local name="cluster ring $cluster_ring link=$cluster_slow_link ping-pong 0<->2 through node 1"
    begin_case "$name" || return 0
    # the cluster first, so that node 1's counters can be read before the run
    "$cluster_script" up --nodes 1 --shape ring "$cluster_ring" --link "$cluster_slow_link" >"$log" 2>&1
    local rx0 tx0 rx1 tx1 rc status rate why="" least
    rx0=$(cluster_bytes xcn1 xl0 rx)
    tx0=$(cluster_bytes xcn1 xl2 tx)
    cluster_launch "$log.run" 1 "$cluster_slow_link" "ring $cluster_ring" --native -- \
        "$TESTS/node_layout" --pingpong "$cluster_pingpong" --peer 2 --reps 2
    rc=$?
    cat "$log.run" >>"$log"
    rm -f "$log.run"
    rx1=$(cluster_bytes xcn1 xl0 rx)
    tx1=$(cluster_bytes xcn1 xl2 tx)
    status=$(summary_status "$log" node_layout)
    rate=$(cluster_rate "$log" inter-node)
    least=$((cluster_pingpong * 3)) # one warm-up and two timed round trips, each way
    if [ $rc -ne 0 ] || [ "$status" != pass ]; then
        why="the program did not pass ($(rc_reason $rc), summary $status)"
    elif why=$(cluster_rate_wrong "$rate" "non-neighbour") && [ -n "$why" ]; then
        :
    elif [ $((rx1 - rx0)) -lt $least ] || [ $((tx1 - tx0)) -lt $least ]; then
        why="node 1 forwarded too little: xl0 received $((rx1 - rx0)) and xl2 sent $((tx1 - tx0)) bytes, at least $least expected"
    else
        echo "node 1: xl0 received $((rx1 - rx0)), xl2 sent $((tx1 - tx0)) bytes" >>"$log"
    fi
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
}

# ---- the cases ----

# A session on the emulated cluster for the cases named in the arguments: 0 when the cluster is
# ours for the duration (the session lock held, torn down on exit), 1 when none of the cases is
# wanted or the cluster cannot run here (each case is then registered, and skipped with the
# reason). cluster_session_close ends it. Used here and by scripts/cases/node.sh.
cluster_session_open() {
    local name wanted=0 why
    for name in "$@"; do
        if [ -z "$ONLY" ] || [[ $name =~ $ONLY ]]; then wanted=1; fi
    done
    if [ $wanted -eq 0 ]; then
        for name in "$@"; do begin_case "$name"; done
        return 1
    fi
    why=$("$cluster_script" check 2>&1) || why=${why#cluster: unavailable: }
    [ "$why" = "cluster: available" ] && why=""
    if [ -z "$why" ]; then
        exec {cluster_lock_fd}>>/run/lock/xchg-cluster.session 2>/dev/null ||
            why="cannot open /run/lock/xchg-cluster.session"
        if [ -z "$why" ] && ! flock -w 600 "$cluster_lock_fd"; then
            why="another cluster session has held /run/lock/xchg-cluster.session for 10 minutes"
        fi
    fi
    if [ -n "$why" ]; then
        for name in "$@"; do
            begin_case "$name" && skip "$name" "$why"
        done
        return 1
    fi
    cluster_torn=0
    trap cluster_teardown EXIT
    trap 'cluster_teardown; exit 130' INT
    trap 'cluster_teardown; exit 143' TERM
}

cluster_session_close() {
    cluster_teardown
    trap - EXIT INT TERM
    exec {cluster_lock_fd}>&-
}

cluster_cases() {
    local names name i n set
    mapfile -t names < <(cluster_case_names)
    cluster_session_open "${names[@]}" || return 0

    for ((i = 0; i < ${#cluster_layouts[@]}; i++)); do
        cluster_layout_case "${cluster_layouts[i]}"
        for ((n = 0; n < ${#cluster_coll_specs[@]}; n++)); do
            [ "$MPI" = mpich ] && [ $n -ne $i ] && continue
            read -r -a set <<<"${cluster_coll_specs[n]}"
            cluster_coll_case "${cluster_layouts[i]}" "${set[@]}"
        done
        for ((n = 0; n < ${#cluster_v_specs[@]}; n++)); do
            [ "$MPI" = mpich ] && [ $n -ne $i ] && continue
            [ "$MPI" = openmpi ] && [ "${cluster_v_specs[n]}" = pairwise ] && continue
            cluster_v_case "${cluster_layouts[i]}" "${cluster_v_specs[n]}"
        done
    done
    cluster_star_rate_case
    cluster_ring_rate_case

    cluster_session_close
    name="cluster torn down: no namespace, interface or hosts entry left"
    if begin_case "$name"; then
        local left
        left=$(cluster_leftovers)
        if [ -z "$left" ]; then pass "$name" "$start"; else
            fail "$name" "left behind: $(echo "$left" | tr '\n' ';' | sed 's/;$//')"
        fi
    fi
    n=$(grep -al '^xchgrun: finalize guard:' "$LOGS"/cluster* 2>/dev/null | wc -l)
    if [ "$n" -gt 0 ]; then
        echo "(cluster: $n launches hung in MPI_Finalize and were ended by xchgrun's finalize guard: MPICH 4.0.2 over UCX/TCP, pmodels/mpich#6596)"
    fi
}

cluster_cases
