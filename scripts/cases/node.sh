# shellcheck shell=bash
# node.sh: the node algorithms (MPI_Alltoall, MPI_Allgather and MPI_Alltoallv through a shared
# segment per node with few large messages between nodes: algos/*_node.c, algos/node.c,
# algos/sched/node.c; segments: shim/shm.c), sourced by run_tests.sh (begin_case, preloaded,
# check_launch, report_launch, pass, fail, skip, $TESTS, $LOGS, $MPI, $LIB, $root; the cluster
# cases also cluster.sh's cluster_launch and cluster_teardown). tests/configs/node.conf runs
# coll_check forced to node on one node at every rank count of the suite; here:
#  - layouts: coll_check with all three collectives forced to node under XCHG_NODES layouts at
#    every rank count of the suite (1, 2, 3, 4, 5, 7, 8): uneven nodes, one-rank nodes, one
#    node; coll_check's reversed and split communicators see them translated (ranks of a node
#    not consecutive, fewer nodes); leaders 1, 2 or 3 in turn (parts by bytes above 128 KiB:
#    coll_check's largest blocks make messages of several hundred KiB), and k (a leader's
#    steps in flight at once; allgather: its ports) 1, 2 or 8 in turn across them (8: all of
#    them at once);
#  - alltoallv_workloads (uniform, h-relations, g-groups: skewed and empty messages) under
#    3,2,2,1 with leaders 1 and 3 (k=8: all steps at once) and under 4,1,1,1,1 with leaders 2
#    (k=2); and under a tuning table
#    that names node:leaders=2 for every MPI_Alltoallv, so that auto decides the calls from
#    the statistics the previous call carried (the shim asks node, which reads every rank's
#    header anyway, to carry them in every call): every stats line must be that rule's; and
#    under 4,1,1,1,1 forced to node with no keys, under a machine line whose start-ups between
#    nodes are dear: the models complete each call's keys from its agreed statistics (k = 5,
#    all steps at once, must run; an empty call's completion, k = 1, ran every call before);
#  - xchg-tune --verify at 4 ranks under XCHG_NODES=2,2: node is among its candidates (a
#    verified cell names it as the models' choice or the measured best), and so is shm at 2
#    ranks, which lie on one node (timed in a p=2 cell);
#  - passes: XCHG_SHM_BYTES=64K (windows of 9280 bytes on 3,2,2,1: coll_check's large blocks in
#    up to 70 passes, the alltoallv headers in a half of their own) with coll_check, and 16K
#    (windows of 2240 bytes) with alltoallv_workloads and 3 leaders;
#  - refusals: XCHG_SHM_BYTES=0 with node forced: XCHG_STRICT=1 stops the first call with the
#    predicate's reason (rank 0 prints it; another rank's MPI_Abort may end the job before the
#    line is out, so up to three launches), and without it the calls fall back (coll_check
#    passes, a fallback line);
#  - segments: comm_hold keeps 100 communicators (more than the 64 segments a process may
#    hold) forced to node under XCHG_NODES=2,2 and to shm on one node, and pauses: while they
#    are all alive (segments mapped) and afterwards, no xchg name may be in /dev/shm;
#    comm_churn forced to node under XCHG_NODES=2,2 and 2,1: a freed communicator's segment on
#    each node serves the next communicator of the same processes (shim/shm.c, the pool), so
#    rank 0 must have taken most of its communicators' segments from the pool;
#  - progress: progress_check forced to node under XCHG_NODES=2,2 with transports whose large
#    messages need the sender's progress (as scripts/cases/shm.sh);
#  - the emulated cluster (when it can run here, as scripts/cases/cluster.sh): coll_check and
#    alltoallv_workloads forced to node with ranks dealt over the nodes round-robin
#    (XCHG_CLUSTER_PLACE=interleave): Open MPI on 3,2,2,1, MPICH on 3,3,2 (its launcher deals
#    one rank per node in turn) and 3,2,2,1 in blocks.

node_forced() { # LEADERS [K]: the three collectives forced to node
    local spec="leaders=$1${2:+,k=$2}"
    echo "XCHG_ALLTOALL=node:$spec XCHG_ALLGATHER=node${2:+:k=$2} XCHG_ALLTOALLV=node:$spec"
}
node_expect() { # LEADERS [K]: what the stats must show
    local spec="leaders=$1${2:+,k=$2}"
    echo "alltoall=node:$spec allgather=node${2:+:k=$2} alltoallv=node:$spec"
}

# ---- layouts at every rank count ----

node_layouts=(1 1,1 2,1 1,1,1 3,1 1,2,1 2,3 1,1,1,1,1 3,2,1,1 4,3 3,2,2,1 4,1,1,1,1 2,2,2,2 8)
if [ -x "$TESTS/coll_check" ]; then
    i=0
    for layout in "${node_layouts[@]}"; do
        p=$(($(tr ',' '+' <<<"$layout")))
        leaders=$((i % 3 + 1))
        ports=(1 2 8)
        ports=${ports[$((i / 3 % 3))]}
        i=$((i + 1))
        name="node coll_check p=$p XCHG_NODES=$layout leaders=$leaders k=$ports"
        begin_case "$name" || continue
        # shellcheck disable=SC2046 # the forced variables are words
        preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_NODES="$layout" \
            $(node_forced "$leaders" "$ports") -- "$TESTS/coll_check"
        # shellcheck disable=SC2046
        check_launch $? "$log" coll_check $(node_expect "$leaders" "$ports")
        report_launch "$name" "$start" "$log"
    done

    name="node coll_check p=8 XCHG_NODES=3,2,2,1 XCHG_SHM_BYTES=64K leaders=2 (passes)"
    if begin_case "$name"; then
        # shellcheck disable=SC2046
        preloaded "$log" 8 XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_NODES=3,2,2,1 \
            XCHG_SHM_BYTES=64K $(node_forced 2) -- "$TESTS/coll_check"
        # shellcheck disable=SC2046
        check_launch $? "$log" coll_check $(node_expect 2)
        report_launch "$name" "$start" "$log"
    fi

    name="node coll_check p=4 XCHG_NODES=2,2 XCHG_SHM_BYTES=0 strict (refused)"
    if begin_case "$name"; then
        for _ in 1 2 3; do
            # shellcheck disable=SC2046
            preloaded "$log" 4 XCHG_WAIT=yield XCHG_STRICT=1 XCHG_NODES=2,2 XCHG_SHM_BYTES=0 \
                $(node_forced 1) -- "$TESTS/coll_check"
            grep -aq "xchg: strict:" "$log" && break
        done
        if grep -aq "xchg: strict: alltoall node cannot serve p=4 .*cannot share memory" "$log"; then
            pass "$name" "$start"
        else
            fail "$name" "no 'xchg: strict: alltoall node cannot serve p=4 ... cannot share memory' line" "$log"
        fi
    fi

    name="node coll_check p=4 XCHG_NODES=2,2 XCHG_SHM_BYTES=0 (falls back)"
    if begin_case "$name"; then
        # shellcheck disable=SC2046
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_STATS=1 XCHG_VERBOSE=1 XCHG_NODES=2,2 \
            XCHG_SHM_BYTES=0 $(node_forced 1) -- "$TESTS/coll_check"
        check_launch $? "$log" coll_check
        if [ "$outcome" = pass ] && ! grep -aq 'fallback: forced node cannot serve this call' "$log"; then
            outcome=fail
            why="no 'fallback: forced node cannot serve this call' line under XCHG_VERBOSE=1"
        fi
        report_launch "$name" "$start" "$log"
    fi
else
    fail "node coll_check" "$TESTS/coll_check is not built"
fi

# ---- alltoallv workloads: skew, empty messages, passes ----

if [ -x "$TESTS/alltoallv_workloads" ]; then
    for run in 3,2,2,1:1:: 3,2,2,1:3:: 3,2,2,1:1:8: 4,1,1,1,1:2:2: 3,2,2,1:3:8:16K; do
        IFS=: read -r layout leaders ports bytes <<<"$run"
        p=$(($(tr ',' '+' <<<"$layout")))
        spec="node:leaders=$leaders${ports:+,k=$ports}"
        name="node alltoallv_workloads p=$p XCHG_NODES=$layout ${spec#node:}${bytes:+ XCHG_SHM_BYTES=$bytes (passes)}"
        begin_case "$name" || continue
        preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_NODES="$layout" \
            ${bytes:+XCHG_SHM_BYTES=$bytes} XCHG_ALLTOALLV="$spec" \
            -- "$TESTS/alltoallv_workloads"
        check_launch $? "$log" alltoallv_workloads "alltoallv=$spec"
        report_launch "$name" "$start" "$log"
    done

    name="node alltoallv_workloads p=8 XCHG_NODES=3,2,2,1 XCHG_TUNING=node:leaders=2 (carried statistics)"
    if begin_case "$name"; then
        table=$LOGS/node-carry.table
        printf '%s\n' 'xchg-tuning 1' 'alltoallv * * node:leaders=2' 'alltoall * * native' \
            'allgather * * native' >"$table"
        preloaded "$log" 8 XCHG_WAIT=yield XCHG_STATS=1 XCHG_NODES=3,2,2,1 XCHG_TUNING="$table" \
            -- "$TESTS/alltoallv_workloads"
        check_launch $? "$log" alltoallv_workloads alltoallv=node:leaders=2
        if [ "$outcome" = pass ] && line=$(grep -a -m 1 -F "$table" "$log"); then
            outcome=fail
            why="the library complained about the table: $line"
        elif [ "$outcome" = pass ] &&
            line=$(stats_lines "$log" alltoallv | grep -av 'xchg: alltoallv node \[leaders=2[],]'); then
            outcome=fail
            why="the table decides every alltoallv call, but a stats line is not its rule: $line"
        fi
        report_launch "$name" "$start" "$log"
    fi

    # forced without keys: the models complete leaders and k for each call from the agreed
    # statistics, as for auto (a machine line whose start-ups between nodes are dear: k = 5,
    # all of a leader's steps at once, for the small calls); before, every call ran what the
    # models give an empty call (k = 1)
    name="node alltoallv_workloads p=8 XCHG_NODES=4,1,1,1,1 node (keys from each call's statistics)"
    if begin_case "$name"; then
        table=$LOGS/node-keys.table
        printf '%s\n' 'xchg-tuning 2' \
            'machine beta=1e-6 tau=1e-10 rho=5e-11 port_share=1 beta_inter=3e-5 tau_inter=1e-9 gap_inter=1e-5' \
            >"$table"
        preloaded "$log" 8 XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_NODES=4,1,1,1,1 \
            XCHG_TUNING="$table" XCHG_ALLTOALLV=node -- "$TESTS/alltoallv_workloads"
        check_launch $? "$log" alltoallv_workloads alltoallv=node:leaders=1,k=5
        if [ "$outcome" = pass ] && line=$(grep -a -m 1 -F "$table" "$log"); then
            outcome=fail
            why="the library complained about the table: $line"
        fi
        report_launch "$name" "$start" "$log"
    fi
fi

# ---- messages between nodes cut into pieces (slow links) ----

# a machine line of slow links (16 KiB take 1.6 ms there, far more than 4 gaps of 20 us): every
# message between two nodes goes in pieces of 16 KiB (algos/round.c, xchg_cut_inter), which the
# library announces; coll_check's largest blocks make leaders' messages of several hundred KiB,
# and pairwise's and ring's cross the nodes as they are; every byte checked as everywhere
if [ -x "$TESTS/coll_check" ] && [ -x "$TESTS/alltoallv_workloads" ]; then
    cut_table=$LOGS/node-cut.table
    printf '%s\n' 'xchg-tuning 2' \
        'machine beta=1e-6 tau=1e-10 rho=5e-11 port_share=1 beta_inter=3e-5 tau_inter=1e-7 gap_inter=2e-5' \
        >"$cut_table"
    # PROGRAM|ALLTOALL|ALLGATHER|ALLTOALLV (alltoallv_workloads makes MPI_Alltoallv only)
    for run in "coll_check|node:leaders=1,k=8|ring|pairwise" \
        "coll_check|pairwise:k=3|node|node:leaders=2" "alltoallv_workloads|||node:leaders=3,k=8" \
        "alltoallv_workloads|||pairwise:k=2"; do
        IFS='|' read -r prog a2a ag a2av <<<"$run"
        name="node $prog p=8 XCHG_NODES=3,2,2,1 slow links: pieces of 16 KiB (${a2a:+alltoall $a2a }${ag:+allgather $ag }alltoallv $a2av)"
        begin_case "$name" || continue
        forced=(XCHG_ALLTOALLV="$a2av")
        expect=("alltoallv=$a2av")
        if [ "$prog" = coll_check ]; then
            forced+=(XCHG_ALLTOALL="$a2a" XCHG_ALLGATHER="$ag")
            expect+=("alltoall=$a2a" "allgather=$ag")
        fi
        preloaded "$log" 8 XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_VERBOSE=1 \
            XCHG_NODES=3,2,2,1 XCHG_TUNING="$cut_table" "${forced[@]}" -- "$TESTS/$prog"
        check_launch $? "$log" "$prog" "${expect[@]}"
        if [ "$outcome" = pass ] && line=$(grep -a -m 1 -F "$cut_table" "$log"); then
            outcome=fail
            why="the library complained about the table: $line"
        elif [ "$outcome" = pass ] &&
            ! grep -aq 'nodes=4 .*messages between nodes in pieces of 16384 B' "$log"; then
            outcome=fail
            why="no 'messages between nodes in pieces of 16384 B' on the world's communicator"
        fi
        report_launch "$name" "$start" "$log"
    done
fi

# ---- xchg-tune: node among the candidates of a layout with nodes ----

# xchg-tune prices and times node where the world's nodes share memory, as the library runs it
# (emulated nodes within one machine: the models price node's passes through the segment below
# every message algorithm on small blocks there, so a verified cell names it, as the models'
# choice or the measured best; before, no cell had node among its candidates); 2 ranks of one
# node share its memory, so shm is among theirs, as the library runs it there
if [ -x "$build_dir/xchg-tune" ]; then
    name="node xchg-tune --verify p=2,4 XCHG_NODES=2,2 (node and shm among the candidates)"
    if begin_case "$name"; then
        table=$LOGS/node-tune.table
        rm -f "$table"
        native "$log" 4 XCHG_NODES=2,2 XCHG_WAIT=yield -- "$build_dir/xchg-tune" --verify \
            --quick --max-bytes 64 --sizes 2,4 -v -o "$table"
        rc=$?
        if [ "$rc" -ne 0 ]; then
            fail "$name" "$(rc_reason "$rc")" "$log"
        elif ! grep -aqE '^(alltoall|allgather|alltoallv) ' "$table"; then
            fail "$name" "$table has no rules" "$log"
        elif ! grep -aqE '^ +(alltoall|allgather|alltoallv) +p=4 .*(model|best) +node' "$log"; then
            fail "$name" "no verified cell names node as the models' choice or the best" "$log"
        elif ! grep -aA1 -E '^ +(alltoall|allgather|alltoallv) +p=2 ' "$log" | grep -aqE '^ +timed \(priced\):.* shm [0-9]'; then
            fail "$name" "shm was timed in no cell of 2 ranks (one node)" "$log"
        else
            pass "$name" "$start"
        fi
    fi
else
    fail "node xchg-tune" "$build_dir/xchg-tune is not built"
fi

# ---- segments: many communicators, nothing in /dev/shm ----

# The names of xchg segments in /dev/shm (none may ever be seen: they are unlinked at once).
node_shm_names() {
    find /dev/shm -maxdepth 1 -name 'xchg-*' 2>/dev/null | tr '\n' ' '
}

if [ -x "$TESTS/comm_churn" ]; then
    for layout in 2,2 2,1; do
        p=$((${layout%,*} + ${layout#*,}))
        name="node comm_churn p=$p XCHG_NODES=$layout (a freed communicator's segments serve the next)"
        begin_case "$name" || continue
        preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_NODES=$layout \
            $(node_forced 1) -- "$TESTS/comm_churn"
        check_launch $? "$log" comm_churn $(node_expect 1)
        kept_segments_check "$log"
        report_launch "$name" "$start" "$log"
    done
else
    fail "node comm_churn" "$TESTS/comm_churn is not built"
fi

if [ -x "$TESTS/comm_hold" ]; then
    for run in "2,2:node" ":shm"; do
        layout=${run%%:*}
        spec=${run#*:}
        name="node comm_hold p=4 ${layout:+XCHG_NODES=$layout }$spec (100 communicators, nothing in /dev/shm)"
        begin_case "$name" || continue
        preloaded "$log" 4 XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 ${layout:+XCHG_NODES=$layout} \
            XCHG_ALLTOALL="$spec" XCHG_ALLGATHER="$spec" XCHG_ALLTOALLV="$spec" \
            -- "$TESTS/comm_hold" 100 --pause 6 &
        launch=$!
        seen=""
        for _ in $(seq 1 120); do
            if grep -aq '^comm_hold: holding' "$log" 2>/dev/null; then
                seen=$(node_shm_names)
                break
            fi
            sleep 1
        done
        wait "$launch"
        rc=$?
        check_launch $rc "$log" comm_hold "alltoall=$spec" "allgather=$spec" "alltoallv=$spec"
        if [ "$outcome" = pass ] && ! grep -aq '^comm_hold: holding' "$log"; then
            outcome=fail
            why="the program never said it held its communicators"
        elif [ "$outcome" = pass ] && [ -n "$seen$(node_shm_names)" ]; then
            outcome=fail
            why="xchg segments have names in /dev/shm: $seen$(node_shm_names)"
        fi
        report_launch "$name" "$start" "$log"
    done
else
    fail "node comm_hold" "$TESTS/comm_hold is not built"
fi

# ---- progress while waiting ----

if [ -x "$TESTS/progress_check" ]; then
    if [ "$MPI" = mpich ]; then
        node_slow=(UCX_TLS=posix,self UCX_RNDV_SCHEME=am)
    else
        node_slow=(OMPI_MCA_btl_vader_single_copy_mechanism=none)
    fi
    name="node progress_check p=4 XCHG_NODES=2,2 ${node_slow[*]}"
    if begin_case "$name"; then
        # shellcheck disable=SC2046
        preloaded "$log" 4 XCHG_STATS=1 XCHG_STRICT=1 XCHG_NODES=2,2 "${node_slow[@]}" \
            $(node_forced 2) -- "$TESTS/progress_check"
        # shellcheck disable=SC2046
        check_launch $? "$log" progress_check $(node_expect 2)
        report_launch "$name" "$start" "$log"
    fi
fi

# ---- the emulated cluster ----

# "NODES PLACE PROGRAM LEADERS" per case: PLACE interleave or blocks
if [ "$MPI" = mpich ]; then
    node_cluster_runs=("3,3,2 interleave coll_check 2" "3,2,2,1 blocks alltoallv_workloads 3")
else
    node_cluster_runs=("3,2,2,1 interleave coll_check 1" "3,2,2,1 interleave alltoallv_workloads 2")
fi

node_cluster_name() { # NODES PLACE PROGRAM LEADERS
    echo "node cluster nodes=$1 $2 $3 node:leaders=$4"
}

node_cluster_cases() {
    local names=() run name nodes place prog leaders vars
    for run in "${node_cluster_runs[@]}"; do
        # shellcheck disable=SC2086
        names+=("$(node_cluster_name $run)")
    done
    if ! declare -F cluster_session_open >/dev/null; then
        for name in "${names[@]}"; do
            begin_case "$name" && skip "$name" "scripts/cases/cluster.sh's helpers are not loaded"
        done
        return 0
    fi
    cluster_session_open "${names[@]}" || return 0
    for run in "${node_cluster_runs[@]}"; do
        read -r nodes place prog leaders <<<"$run"
        name=$(node_cluster_name "$nodes" "$place" "$prog" "$leaders")
        begin_case "$name" || continue
        vars=(XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 XCHG_ALLTOALLV="node:leaders=$leaders")
        [ "$place" = interleave ] && vars+=(XCHG_CLUSTER_PLACE=interleave XCHG_VERBOSE=1)
        [ "$prog" = coll_check ] &&
            vars+=(XCHG_ALLTOALL="node:leaders=$leaders" XCHG_ALLGATHER=node)
        cluster_launch "$log" "$nodes" 1gbit star "${vars[@]}" -- "$TESTS/$prog"
        rc=$?
        # MPICH 4.0.2 over UCX/TCP: ranks that hang in MPI_Finalize after the program's output
        # is complete are ended by xchgrun's finalize guard; when the launcher noticed first,
        # it reports a failure for them
        if [ $rc -ne 0 ] && grep -aq '^xchgrun: finalize guard:' "$log" &&
            [ "$(summary_status "$log" "$prog")" = pass ]; then
            rc=0
        fi
        if [ "$prog" = coll_check ]; then
            # shellcheck disable=SC2046
            check_launch $rc "$log" "$prog" $(node_expect "$leaders")
        else
            check_launch $rc "$log" "$prog" "alltoallv=node:leaders=$leaders"
        fi
        if [ "$outcome" = pass ] && [ "$place" = interleave ] &&
            ! grep -aq "^xchg: communicator p=8: nodes=$(cluster_count "$nodes") .*interleaved" "$log"; then
            outcome=fail
            why="the library did not see $nodes nodes with interleaved ranks: $(grep -a '^xchg: communicator p=8' "$log" | head -n 1)"
        fi
        report_launch "$name" "$start" "$log"
    done
    cluster_session_close
}

node_cluster_cases
