# shellcheck shell=bash
# sim.sh: the simulator (build/xchg-sim, docs/sim.md), sourced by run_tests.sh
# (begin_case, pass, fail, skip, $BUILD, $MPI, $LOGS). MPICH suite only: the simulator runs no
# MPI at all, so one run of it is enough (the Open MPI suite skips these cases).
#
# Every case runs the algorithm functions of algos/ on simulated ranks and checks every byte
# received, the guards around and between receive ranges, the send buffers, and (alltoallv)
# the agreed and carried maxima; any run that fails fails the case, naming the run.
#  - flat network: every registered algorithm (torus with dims=, the most square shape) at
#    every p from 1 to 64 with blocks of 1, 8 and 100 bytes (and 0 up to p = 8), some parameter variants, the
#    skewed alltoallv workloads (hrel, ggroup) of tuning/workloads.c; then p = 100, 128, 257
#    with 1, 8 and 100 bytes, and p = 1000 (1 byte) and 1024 (8 bytes): twophase only up to
#    257 (its transposes need p (4p + p/2 + h/p) bytes per rank, p^3 in one process), torus at
#    1000 and 1024 in the torus case, pairwise alltoallv without carried statistics there
#    (its scratch is 2 KiB per message in flight: 2 GiB at p = 1024);
#  - nodes network: hier (alltoall and alltoallv) on uneven layouts (sizes cycling 3,2,1,4) at
#    every p up to 64 and 100, 257, 1000, with the other algorithms at a few p;
#  - torus network: the torus algorithm on every shape up to 64 (the most square one and the
#    ring), and 10x10, 16x8, 257 (a ring), 25x40, 32x32 (1-byte blocks);
#  - the clock: simulated time equal to the model's where the model is exact (docs/sim.md),
#    and two times computed by hand (one with link contention on a ring);
#  - self-tests: one flipped byte in a delivered message must fail with "WRONG DATA", a receive
#    one byte longer than its send with "message size mismatch", bad arguments with status 2.

sim_bin="$BUILD/xchg-sim"
sim_list="$LOGS/sim-runs.$$" # the runs of the case at hand (per suite: suites may overlap)

# sim_runs NAME LOG: run the lines of $sim_list (arguments of xchg-sim, one run a line) in
# $NPROC shards at once (the runs are independent and use no MPI), and pass or fail the case
# (files, not pipes: pass and fail count in this shell).
sim_runs() {
    local name=$1 log=$2 n bad shard pids=()
    : >"$log"
    n=$(grep -c . "$sim_list")
    for ((shard = 0; shard < NPROC; shard++)); do
        awk -v shard="$shard" -v shards="$NPROC" 'NF && (NR - 1) % shards == shard' "$sim_list" |
            while read -r line; do
                # shellcheck disable=SC2086
                timeout 120 "$sim_bin" $line --csv >>"$log.$shard" 2>&1 ||
                    echo "failed: xchg-sim $line (exit status $?; 124: over 120 s, above 128: signal)" >>"$log.$shard.bad"
            done &
        pids+=($!)
    done
    wait "${pids[@]}"
    bad=$(cat "$log".*.bad 2>/dev/null | wc -l)
    cat "$log".*.bad 2>/dev/null | head -n 3 >>"$log"
    for ((shard = 0; shard < NPROC; shard++)); do
        cat "$log.$shard" >>"$log" 2>/dev/null
    done
    rm -f "$sim_list" "$log".*
    if [ "$bad" -eq 0 ]; then
        pass "$name ($n runs)" "$start"
    else
        fail "$name" "$bad of $n runs failed" "$log"
    fi
}

# The most square R x C (R <= C) with p nodes.
sim_shape() {
    local p=$1 r=1 d=1
    while [ $((d * d)) -le "$p" ]; do
        [ $((p % d)) -eq 0 ] && r=$d
        d=$((d + 1))
    done
    echo "${r}x$((p / r))"
}

# Node sizes cycling 3,2,1,4 up to p ranks.
sim_layout() {
    local p=$1 left=$1 i=0 out="" s
    local sizes=(3 2 1 4)
    while [ "$left" -gt 0 ]; do
        s=${sizes[i % 4]}
        [ "$s" -gt "$left" ] && s=$left
        out="$out${out:+,}$s"
        left=$((left - s))
        i=$((i + 1))
    done
    echo "$out"
}

sim_specs_small=("alltoall pairwise" "alltoall pairwise:k=1" "alltoall radix" "alltoall radix:r=2,k=1"
    "alltoall radix:r=3,k=2" "alltoall hier:k=1" "allgather ring" "allgather circulant"
    "allgather circulant:k=1" "allgather circulant:k=2 --inplace" "alltoallv pairwise"
    "alltoallv pairwise:k=1" "alltoallv hier:k=2" "alltoallv twophase"
    "alltoallv twophase:inner=pairwise" "alltoallv twophase:inner=radix,r=2 --workload hrel:h=2"
    "alltoallv pairwise:k=2 --workload ggroup:g=2,t=1" "alltoallv hier --workload hrel:h=3")

if [ "$MPI" != mpich ]; then
    name="sim (simulator)"
    begin_case "$name" && skip "$name" "run once, in the MPICH suite (the simulator uses no MPI)"
elif [ ! -x "$sim_bin" ]; then
    name="sim (simulator)"
    begin_case "$name" && fail "$name" "$sim_bin is not built"
else
    name="sim flat p=1..64 every algorithm, bytes 1,8,100 (and 0 up to p=8)"
    if begin_case "$name"; then
        for p in $(seq 1 64); do
            for b in 0 1 8 100; do
                [ "$b" -eq 0 ] && [ "$p" -gt 8 ] && continue
                for spec in "${sim_specs_small[@]}"; do echo "$spec p=$p bytes=$b"; done
                echo "alltoall torus:dims=$(sim_shape "$p") p=$p bytes=$b"
            done
        done >"$sim_list"
        sim_runs "$name" "$log"
    fi

    name="sim flat p=100,128,257 every algorithm, bytes 1,8,100"
    if begin_case "$name"; then
        for p in 100 128 257; do
            for b in 1 8 100; do
                for spec in "alltoall pairwise" "alltoall radix" "alltoall hier" "allgather ring" \
                    "allgather circulant" "alltoallv pairwise" "alltoallv hier"; do
                    echo "$spec p=$p bytes=$b"
                done
            done
            echo "alltoallv twophase p=$p bytes=1"
            echo "alltoallv twophase p=$p bytes=100"
            echo "alltoallv twophase p=$p bytes=8 --workload hrel:h=4"
            [ "$p" -lt 257 ] && echo "alltoall torus:dims=$(sim_shape "$p") p=$p bytes=8"
        done >"$sim_list"
        sim_runs "$name" "$log"
    fi

    # (torus at 257 is the ring of the torus case; twophase is left out: p^3 bytes)
    name="sim flat p=1000,1024 every algorithm but twophase and torus, bytes 1 or 8"
    if begin_case "$name"; then
        for p in 1000 1024; do
            b=1 && [ "$p" -eq 1024 ] && b=8
            for spec in "alltoall pairwise" "alltoall radix" "alltoall radix:r=2" "alltoall hier" \
                "allgather circulant" "alltoallv pairwise --no-carry" "alltoallv hier"; do
                echo "$spec p=$p bytes=$b"
            done
        done >"$sim_list"
        echo "allgather ring p=1024 bytes=8" >>"$sim_list"
        sim_runs "$name" "$log"
    fi

    name="sim nodes hier on uneven layouts p=1..64,100,257,1000"
    if begin_case "$name"; then
        for p in $(seq 1 64) 100 257 1000; do
            net="--net nodes=$(sim_layout "$p") --beta-inter 1e-5 --tau-inter 1e-9 --inject 1"
            for b in 1 100; do
                [ "$p" -ge 1000 ] && [ "$b" -eq 100 ] && continue
                echo "alltoall hier p=$p bytes=$b $net"
                echo "alltoall hier:k=1 p=$p bytes=$b $net"
                echo "alltoallv hier p=$p bytes=$b $net --workload hrel:h=2"
            done
            case $p in 7 | 16 | 33 | 64 | 257)
                for spec in "alltoall pairwise" "alltoall radix" "allgather circulant" \
                    "allgather ring" "alltoallv pairwise" "alltoallv twophase"; do
                    echo "$spec p=$p bytes=8 $net"
                done ;;
            esac
        done >"$sim_list"
        sim_runs "$name" "$log"
    fi

    name="sim torus the torus algorithm on every shape up to 64 and five large ones"
    if begin_case "$name"; then
        {
            for p in $(seq 1 64); do
                for shape in "$(sim_shape "$p")" "$p"; do
                    for b in 1 64; do
                        echo "alltoall torus p=$p bytes=$b --net torus=$shape --port-share 0"
                    done
                done
                case $p in 16 | 30 | 64) echo "alltoall radix p=$p bytes=8 --net torus=$(sim_shape "$p")" ;; esac
            done
            for shape in 10x10 16x8 257 25x40 32x32; do
                echo "alltoall torus p=$((${shape/x/*})) bytes=1 --net torus=$shape --port-share 0"
            done
        } >"$sim_list"
        sim_runs "$name" "$log"
    fi

    # The clock: where the cost model prices exactly the rounds the code runs (docs/sim.md's
    # table), the simulated time must equal the model's to the CSV's 4 digits; and two
    # hand-computed times: pairwise k=1 at p=8, 100 B: 7 (3 us + 100 x 0.2 ns) = 21.14 us; a ring
    # of 8 with pairwise k=1 at 1000 B (tau 1 ns, beta 0): step s loads each link with
    # min(s, 8 - s) messages (s = 4 split both ways: 2), so 1+2+3+2+3+2+1 = 14 us.
    name="sim clock: simulated time equals the model's where both are exact, and two by hand"
    if begin_case "$name"; then
        why=""
        for run in "alltoall pairwise:k=1 p=37 bytes=100" "alltoall radix:r=3,k=2 p=81 bytes=8" \
            "allgather circulant p=100 bytes=64" "allgather ring p=20 bytes=5" \
            "alltoallv twophase p=50 bytes=16 --workload hrel:h=2" \
            "alltoall hier p=64 bytes=100 --net nodes=8*8 --beta-inter 3e-5 --tau-inter 2e-9 --inject 1" \
            "alltoall torus p=64 bytes=1024 --net torus=8x8 --port-share 0"; do
            # shellcheck disable=SC2086
            ratio=$("$sim_bin" $run --csv 2>&1 | tail -n 1 | cut -d, -f11)
            [ "$ratio" = 1.0000 ] || why="$why; $run: model/simulated $ratio, not 1.0000"
        done
        t=$("$sim_bin" alltoall pairwise:k=1 p=8 bytes=100 --csv | tail -n 1 | cut -d, -f9)
        [ "$t" = 2.114000e-05 ] || why="$why; pairwise k=1 p=8: $t s, not 2.114000e-05"
        t=$("$sim_bin" alltoall pairwise:k=1 p=8 bytes=1000 --net torus=8 --beta 0 --tau 1e-9 --csv |
            tail -n 1 | cut -d, -f9)
        [ "$t" = 1.400000e-05 ] || why="$why; pairwise k=1 on a ring of 8: $t s, not 1.400000e-05"
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "${why#; }"; fi
    fi

    name="sim self-test: a wrong byte, a size mismatch and bad arguments are caught"
    if begin_case "$name"; then
        why=""
        for spec in "alltoall pairwise:k=1" "alltoall radix:r=2" "allgather ring" \
            "alltoallv pairwise --no-carry"; do
            # shellcheck disable=SC2086
            out=$("$sim_bin" $spec p=5 bytes=8 --corrupt 2>&1)
            rc=$?
            [ $rc -eq 1 ] && grep -q "WRONG DATA" <<<"$out" ||
                why="$why; $spec --corrupt: status $rc, not a WRONG DATA failure"
        done
        out=$("$sim_bin" alltoall radix:r=2 p=5 bytes=8 --corrupt-size 2>&1)
        rc=$?
        [ $rc -eq 1 ] && grep -q "message size mismatch: rank" <<<"$out" ||
            why="$why; --corrupt-size: status $rc, no size mismatch reported"
        for bad in "alltoall radix p=0 bytes=8" "alltoall radix p=4 bytes=x" "alltoall nope p=4 bytes=8" \
            "alltoall radix:q=1 p=4 bytes=8" "alltoall radix p=4 bytes=8 --beta -1" \
            "alltoall hier p=4 bytes=8 --net nodes=3,2" "alltoall radix p=4 bytes=8 --net torus=3x3" \
            "alltoallv pairwise p=4 bytes=8 --workload bogus" "alltoall native p=4 bytes=8"; do
            # shellcheck disable=SC2086
            "$sim_bin" $bad >/dev/null 2>&1
            rc=$?
            [ $rc -eq 2 ] || why="$why; '$bad': status $rc, not 2"
        done
        if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "${why#; }"; fi
    fi
fi
