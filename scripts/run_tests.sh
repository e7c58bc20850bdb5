#!/usr/bin/env bash
# run_tests.sh: the whole xchg test suite; `make test` calls it (after building everything) as
#     MPI=mpich|openmpi BUILD=build|build/openmpi scripts/run_tests.sh
#
#  1. unit tests: every $BUILD/tests/unit/test_* (no MPI launcher);
#  2. the MPI correctness programs with the library preloaded, XCHG_WAIT=yield, XCHG_STATS=1:
#     coll_check at 1, 2, 3, 4, 5, 7 and 8 ranks once per configuration of tests/configs/*.conf
#     (the three collectives zipped: launch i forces the i-th configuration of each, shorter
#     lists padded with their own forced configurations again, in turn); every forced
#     algorithm must appear, with its parameters as they run on that many ranks (as_run:
#     values a communicator cannot use are clamped), in the XCHG_STATS lines, so an algorithm
#     that silently does not run fails. alltoallv_workloads the same way for every alltoallv
#     configuration; the radix_sort app natively and with twophase and pairwise forced, at 1,
#     4 and 8 ranks;
#  3. behaviour: bad XCHG_* values, XCHG_DISABLE, XCHG_VERBOSE, the Fortran programs (their
#     calls intercepted), errors_check natively and preloaded, comm_churn, large_count at 1 and
#     2 ranks, XCHG_TUNING with a missing file and with a malformed line, and auto under a
#     table that names one algorithm for every call (then hier, which carries alltoallv's
#     statistics, then native): the XCHG_STATS
#     lines must show exactly the table's algorithms;
#  4. message splitting (MPICH only): coll_check at 3 and 4 ranks and alltoallv_workloads at 4
#     ranks, forced to pairwise, ring, radix, circulant and twophase, with the library built by
#     `make PIECE=$XCHG_TEST_PIECE lib` (default 4096; $BUILD/piece-4096/libxchg.so), which
#     splits every message above that many bytes; the stats must show blocks above it;
#  5. every scripts/cases/*.sh, sourced (in name order): more cases, written with the helpers
#     below (begin_case, preloaded, native, check_launch, report_launch, pass, fail, skip).
# Every run that forces an algorithm sets XCHG_STRICT=1, under which a forced algorithm that
# cannot serve a call makes the call fail after a line "xchg: strict: ..."; a log with such a
# line fails its case, naming the line.
# Every launch has no standard input and a time limit (XCHG_TEST_TIMEOUT, default 180 s; after
# 3 timed-out launches the rest are not started and count as failed, so that a hanging library
# fails the suite in minutes); its output is kept in $BUILD/test-logs/ and its tail printed
# when it fails. The programs stop themselves (MPI_Abort) when a call returns an error, since
# the ranks may then be out of step. One line per case,
# "PASS name (seconds)", "FAIL name: why" or "SKIP name: why"; the last line is
# "N passed, M failed" (", K skipped" when something was skipped); exit status 1 if M > 0.
#
# XCHG_TEST_ONLY=REGEX runs only the cases whose name (as in the PASS/FAIL lines) matches the
# extended regular expression anywhere, e.g. XCHG_TEST_ONLY='^coll_check p=4 ' or
# XCHG_TEST_ONLY='split|XCHG_TUNING'; the summary says how many were left out, and a filter
# that matches no case fails. Problems in tests/configs/*.conf and missing builds are reported
# whatever the filter.
set -uo pipefail

MPI=${MPI:-mpich}
case $MPI in
mpich) BUILD=${BUILD:-build} ;;
openmpi) BUILD=${BUILD:-build/openmpi} ;;
*)
    echo "run_tests.sh: MPI must be mpich or openmpi, not '$MPI'" >&2
    exit 2
    ;;
esac
root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
cd "$root" || exit 2
case $BUILD in
/*) build_dir=$BUILD ;;
*) build_dir=$root/$BUILD ;;
esac
LIB=$build_dir/libxchg.so
TESTS=$build_dir/tests
LOGS=$build_dir/test-logs
TIMEOUT=${XCHG_TEST_TIMEOUT:-180}
ONLY=${XCHG_TEST_ONLY:-}
PIECE=${XCHG_TEST_PIECE:-4096} # message size above which the library of section 4 splits
PIECE_MPIS="mpich"             # MPIs on which section 4 runs
MAX_TIMEOUTS=3 # after this many timed-out launches the rest are not started (a hanging library)
RANKS=(1 2 3 4 5 7 8)
FORTRAN_MPIS="mpich openmpi" # MPIs on which the Fortran programs run
NPROC=$(nproc)

# bash's [[ =~ ]] answers 2 for a malformed expression.
[[ "" =~ $ONLY ]]
if [ $? -eq 2 ]; then
    echo "run_tests.sh: XCHG_TEST_ONLY='$ONLY' is not an extended regular expression" >&2
    exit 2
fi
if ! [[ $PIECE =~ ^[1-9][0-9]*$ ]]; then
    echo "run_tests.sh: XCHG_TEST_PIECE must be a number of bytes, not '$PIECE'" >&2
    exit 2
fi

# The caller's XCHG_* settings must not leak into the cases (XCHG_TEST_* are read above).
for var in $(compgen -e); do
    case $var in XCHG_*) unset "$var" ;; esac
done
# No case reads or writes the user's cache of tables (shim/cache.c): a verdict cached by one case
# would change what the next one runs. The cache's own cases give it a directory of their own.
export XCHG_CACHE=0

rm -rf "$LOGS"
mkdir -p "$LOGS"
npassed=0
nfailed=0
nskipped=0
suite_start=$(date +%s.%N)

# ---- reporting ----

elapsed_since() {
    awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

pass() { # NAME START
    npassed=$((npassed + 1))
    echo "PASS $1 ($(elapsed_since "$2") s)"
}

fail() { # NAME WHY [LOG]
    nfailed=$((nfailed + 1))
    echo "FAIL $1: $2"
    if [ $# -ge 3 ] && [ -f "$3" ]; then
        echo "    log: $3 (last lines below)"
        tail -n 25 "$3" | sed 's/^/    | /'
    fi
}

skip() { # NAME WHY
    nskipped=$((nskipped + 1))
    echo "SKIP $1: $2"
}

# begin_case NAME: whether the case is to run (its name matches XCHG_TEST_ONLY); when it is,
# sets log (its log file) and start. Every case starts with it: `begin_case "$name" || continue`.
nleft_out=0
nbegun=0
# verdict NAME LOG WHY: pass the case when WHY is empty, else fail it with WHY
verdict() {
    if [ -z "$3" ]; then pass "$1" "$start"; else fail "$1" "$3" "$2"; fi
}

begin_case() {
    if [ -n "$ONLY" ] && ! [[ $1 =~ $ONLY ]]; then
        nleft_out=$((nleft_out + 1))
        return 1
    fi
    nbegun=$((nbegun + 1))
    log=$(log_for "$1")
    start=$(date +%s.%N)
}

# ---- launching ----

# A log file name from a case name.
log_for() {
    echo "$LOGS/$(echo "$1" | tr -c 'A-Za-z0-9=.,:_-' '_' | cut -c1-180).log"
}

# run_logged LOG CMD...: no standard input, output to LOG, under the time limit. Once
# MAX_TIMEOUTS launches have timed out, nothing more is started (status 125), so that a library
# that hangs fails the suite in minutes rather than hours.
ntimeouts=0
run_logged() {
    local log=$1 rc
    shift
    if [ $ntimeouts -ge $MAX_TIMEOUTS ]; then
        echo "not started: $ntimeouts launches have timed out already" >"$log"
        return 125
    fi
    timeout -k 10 "$TIMEOUT" "$@" </dev/null >"$log" 2>&1
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        ntimeouts=$((ntimeouts + 1))
    fi
    return $rc
}

# Why a launch with exit status RC failed, in words.
rc_reason() {
    case $1 in
    124 | 137) echo "timed out after $TIMEOUT s" ;;
    125) echo "not started: $MAX_TIMEOUTS launches have timed out already" ;;
    *) echo "exit status $1" ;;
    esac
}

# The MPI's own launcher, for native runs of N ranks (as xchgrun does for Open MPI).
native_launcher() { # N
    if [ "$MPI" = mpich ]; then
        echo mpiexec.mpich -n "$1"
    else
        local opts="-n $1"
        [ "$(id -u)" -eq 0 ] && opts="--allow-run-as-root $opts"
        [ "$1" -gt "$NPROC" ] && opts="--oversubscribe --mca mpi_yield_when_idle 1 $opts"
        echo "mpirun.openmpi $opts"
    fi
}

# preloaded LOG N [VAR=VALUE...] -- PROGRAM [ARGS]: the library preloaded through xchgrun.
preloaded() {
    local log=$1 n=$2
    shift 2
    local vars=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    run_logged "$log" env "${vars[@]}" XCHG_LIB="$LIB" "$root/scripts/xchgrun" \
        --mpi="$MPI" -n "$n" "$@"
}

# native LOG N [VAR=VALUE...] -- PROGRAM [ARGS]: no library.
native() {
    local log=$1 n=$2
    shift 2
    local vars=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        vars+=("$1")
        shift
    done
    shift
    # shellcheck disable=SC2046
    run_logged "$log" env "${vars[@]}" $(native_launcher "$n") "$@"
}

# ---- checking a log ----

# The program's summary "PROG: N checks, M failed[, K skipped]": prints pass, fail, skip or
# missing.
summary_status() { # LOG PROG
    local line
    line=$(grep -aoE "$2: [0-9]+ checks, [0-9]+ failed(, [0-9]+ skipped)?" "$1" | tail -n 1)
    if [ -z "$line" ]; then
        echo missing
        return
    fi
    local checks failed skipped
    checks=$(echo "$line" | sed -E 's/.*: ([0-9]+) checks.*/\1/')
    failed=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
    skipped=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p')
    if [ "$failed" != 0 ]; then
        echo fail
    elif [ -n "$skipped" ] && [ "$skipped" != 0 ]; then
        echo skip
    elif [ "$checks" = 0 ]; then
        echo fail
    else
        echo pass
    fi
}

# The XCHG_STATS lines of COLL in LOG: "xchg: COLL NAME [params] calls=N ...".
stats_lines() { # LOG COLL
    grep -aE "^xchg: $2 [a-z0-9_]+ \[[^]]*\] calls=" "$1"
}

# Is LINE (a stats line) SPEC's: NAME, and every KEY=VALUE of the spec among its parameters?
line_is_spec() { # LINE SPEC
    local name=${2%%:*} params="" bracket item items
    [[ $2 == *:* ]] && params=${2#*:}
    [[ $1 =~ ^xchg:\ [a-z]+\ $name\ \[ ]] || return 1
    bracket=${1#*\[}
    bracket=",${bracket%%\]*},"
    IFS=',:' read -ra items <<<"$params"
    for item in "${items[@]}"; do
        [ -z "$item" ] && continue
        [[ $bracket == *",$item,"* ]] || return 1
    done
    return 0
}

# Did SPEC (NAME[:KEY=VALUE,...]) of COLL run? Some stats line of COLL must be SPEC's.
stats_has() { # LOG COLL SPEC
    local line
    while IFS= read -r line; do
        line_is_spec "$line" "$3" && return 0
    done < <(stats_lines "$1" "$2")
    return 1
}

# The largest max_block of the stats lines of COLL that are SPEC's (0 without any).
stats_max_block() { # LOG COLL SPEC
    local line max=0 block
    while IFS= read -r line; do
        line_is_spec "$line" "$3" || continue
        block=$(echo "$line" | sed -nE 's/.* max_block=([0-9]+) .*/\1/p')
        [ -n "$block" ] && [ "$block" -gt "$max" ] && max=$block
    done < <(stats_lines "$1" "$2")
    echo "$max"
}

# as_run SPEC P: the parameters with which a forced SPEC runs on P ranks, as the stats show
# them. A value the communicator cannot use is clamped to what runs (tuning/cost_*.c return
# the parameters as they run): pairwise's and circulant's k to 1 .. P-1, radix's r to 2 .. P
# and then its k to 1 .. r-1 (a radix k without r is left as given: the model picks r). The
# launches force the spec as written, so that clamping is exercised too.
as_run() { # SPEC P
    local spec=$1 p=$2 name items item r="" k="" rest=""
    name=${spec%%:*}
    case $name in pairwise | circulant | radix) ;; *)
        echo "$spec"
        return
        ;;
    esac
    [[ $spec == *:* ]] && IFS=',:' read -ra items <<<"${spec#*:}" || items=()
    for item in "${items[@]}"; do
        case $item in
        r=[0-9]*) r=${item#r=} ;;
        k=[0-9]*) k=${item#k=} ;;
        ?*) rest="$rest,$item" ;;
        esac
    done
    if [ -n "$r" ]; then
        [ "$r" -gt "$p" ] && r=$p
        [ "$r" -lt 2 ] && r=2
        rest="$rest,r=$r"
    fi
    if [ -n "$k" ]; then
        if [ "$name" = radix ]; then
            [ -n "$r" ] && [ "$k" -gt $((r - 1)) ] && k=$((r - 1))
        elif [ "$k" -gt $((p - 1)) ]; then
            k=$((p - 1))
        fi
        [ "$k" -lt 1 ] && k=1
        rest="$rest,k=$k"
    fi
    echo "$name${rest:+:${rest#,}}"
}

# The first "xchg: strict:" line of LOG (XCHG_STRICT=1: a forced algorithm could not serve a
# call, which then failed); status 1 when there is none. Anywhere in a line, in case the
# ranks' output interleaves.
strict_line() { # LOG
    grep -a -m 1 'xchg: strict:' "$1"
}

# Check a launch of PROG: no strict refusal, exit status, summary line, no configuration
# complaints, and the stats of every forced "COLL=SPEC" (SPEC as it runs: as_run). Sets why
# (empty when it passed) and outcome.
check_launch() { # RC LOG PROG [COLL=SPEC...]
    local rc=$1 log=$2 prog=$3 status pair coll spec line
    shift 3
    why=""
    outcome=fail
    status=$(summary_status "$log" "$prog")
    if line=$(strict_line "$log"); then
        why="a forced algorithm could not serve a call (XCHG_STRICT=1): $line"
    elif [ "$rc" -ge 124 ] && [ "$rc" -le 125 ] || [ "$rc" -eq 137 ]; then
        why=$(rc_reason "$rc")
    elif [ "$status" = missing ]; then
        why="no '$prog: N checks, M failed' line (exit status $rc)"
    elif [ "$status" = fail ]; then
        why="checks failed (exit status $rc)"
    elif [ "$rc" -ne 0 ]; then
        why="exit status $rc"
    elif grep -aqE '^xchg: XCHG_' "$log"; then
        why="the library complained about the configuration: $(grep -aE '^xchg: XCHG_' "$log" | head -n 1)"
    else
        for pair in "$@"; do
            coll=${pair%%=*}
            spec=${pair#*=}
            [ "$spec" = auto ] && continue
            if ! stats_has "$log" "$coll" "$spec"; then
                why="forced $coll to ${spec%%:*}, but no 'xchg: $coll ${spec%%:*} [...]' stats line has the parameters '${spec#"${spec%%:*}"}': it did not run as forced"
                return
            fi
        done
        outcome=$status
    fi
}

report_launch() { # NAME START LOG
    case $outcome in
    pass) pass "$1" "$2" ;;
    skip) skip "$1" "$(grep -a 'SKIP' "$3" | head -n 1)" ;;
    *) fail "$1" "$why" "$3" ;;
    esac
}

# ---- configurations (tests/configs/*.conf) ----

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

# ---- 1. unit tests ----

unit_found=0
for t in "$TESTS"/unit/test_*; do
    [ -x "$t" ] || continue
    unit_found=1
    name="unit $(basename "$t")"
    begin_case "$name" || continue
    run_logged "$log" "$t"
    rc=$?
    if [ $rc -eq 0 ]; then
        pass "$name" "$start"
    else
        fail "$name" "$(rc_reason $rc)" "$log"
    fi
done
[ $unit_found -eq 1 ] || fail "unit tests" "none built under $TESTS/unit"

# ---- 2. correctness programs under every configuration ----

if [ ! -f "$LIB" ]; then
    fail "library" "$LIB is not built"
fi

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

# ---- 3. behaviour ----

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
table_case() {
    local name=$1 table line rule coll found fields
    shift
    begin_case "$name" || return 0
    table=$LOGS/$(echo "$name" | tr -c 'A-Za-z0-9=.,:_-' '_' | cut -c1-100).table
    printf '%s\n' 'xchg-tuning 1' "# $name" "$@" >"$table"
    preloaded "$log" 4 XCHG_WAIT=yield XCHG_STATS=1 XCHG_TUNING="$table" -- "$TESTS/coll_check"
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
    table_case "XCHG_TUNING=native for every call p=4" \
        'alltoall * * native' 'allgather * * native' 'alltoallv * * native'
fi

# ---- 4. message splitting ----

# split_case P PROG COLL=SPEC...: PROG at P ranks with the library of `make PIECE=$PIECE lib`
# and every COLL forced to SPEC (strictly). Besides the usual checks, each forced algorithm's
# stats must show a block above $PIECE bytes (the size key; for twophase the transposes'
# blocks are at least about that large), so its messages were cut into pieces in round.c.
split_case() {
    local p=$1 prog=$2 pair coll vars=() max
    shift 2
    local name="split at $PIECE $prog p=$p $*"
    begin_case "$name" || return 0
    for pair in "$@"; do
        coll=${pair%%=*}
        vars+=("XCHG_${coll^^}=${pair#*=}")
    done
    # LIB given to one call of preloaded only (bash restores it afterwards)
    LIB=$piece_lib preloaded "$log" "$p" XCHG_WAIT=yield XCHG_STATS=1 XCHG_STRICT=1 "${vars[@]}" \
        -- "$TESTS/$prog"
    check_launch $? "$log" "$prog" "$@"
    for pair in "$@"; do
        [ "$outcome" = pass ] || break
        max=$(stats_max_block "$log" "${pair%%=*}" "${pair#*=}")
        if [ "$max" -le "$PIECE" ]; then
            outcome=fail
            why="${pair%%=*} ${pair#*=} saw no block above $PIECE bytes (max_block=$max): nothing was split"
        fi
    done
    report_launch "$name" "$start" "$log"
}

# The rest of the suite splits only messages above 1 GiB (large_count, which needs memory that
# test machines rarely have). coll_check's largest blocks (3000 elements, 12 to 72 KB) and
# alltoallv_workloads' are far above the piece size.
case " $PIECE_MPIS " in
*" $MPI "*)
    piece_lib=$build_dir/piece-$PIECE/libxchg.so
    if [ ! -f "$piece_lib" ]; then
        fail "split at $PIECE" "$piece_lib is not built (make MPI=$MPI PIECE=$PIECE lib)"
    else
        for p in 3 4; do
            split_case "$p" coll_check alltoall=pairwise allgather=ring alltoallv=pairwise
            split_case "$p" coll_check alltoall=radix allgather=circulant alltoallv=twophase
        done
        split_case 4 alltoallv_workloads alltoallv=pairwise
        split_case 4 alltoallv_workloads alltoallv=twophase
    fi
    ;;
*)
    echo "(message splitting at $PIECE bytes is not run on $MPI)"
    ;;
esac

# ---- 5. more cases: scripts/cases/*.sh ----

for f in scripts/cases/*.sh; do
    # shellcheck source=/dev/null
    [ -f "$f" ] && source "$f"
done

echo "suite time: $(elapsed_since "$suite_start") s ($MPI, $BUILD, logs in $LOGS)"
if [ -n "$ONLY" ]; then
    echo "XCHG_TEST_ONLY='$ONLY': $nbegun cases run, $nleft_out left out"
    if [ $nbegun -eq 0 ]; then
        fail "XCHG_TEST_ONLY" "'$ONLY' matches no case"
    fi
fi
if [ $nskipped -gt 0 ]; then
    echo "$npassed passed, $nfailed failed, $nskipped skipped"
else
    echo "$npassed passed, $nfailed failed"
fi
[ $nfailed -eq 0 ]
