#!/usr/bin/env bash
# coverage.sh: line coverage of the parsers by the fuzz corpora (`make fuzz-coverage` builds the
# harnesses with clang's source-based coverage into build/fuzz/cov/ and calls this).
#     tests/fuzz/coverage.sh PROFDATA_TOOL COV_TOOL HARNESS...
# Each harness replays its committed corpus (tests/fuzz/corpus/NAME) and the campaign's when
# there is one (build/fuzz/corpus/NAME); the report gives, for every harness and then for all
# of them together, the coverage of the parsers' sources, and the coverage of each parsing
# function (in registry.c and torus.c only those that parse or format input: the rest of those
# files is the registry's data and the torus schedule).
set -euo pipefail
profdata=$1 cov=$2
shift 2
dir=build/fuzz/cov
sources=(tuning/table_parse.c tuning/table_load.c tuning/table_write.c tuning/registry.c
    tuning/size.c tuning/env.c algos/sched/torus.c)
parsing='^([a-z_]+[.]c:)?(xchg_torus_parse_dims|parse_dim|xchg_spec_parse|parse_item|xchg_param_parse|parse_long|range_text|format_value|xchg_params_format|list_names|xchg_algo_find|xchg_algo_key|xchg_algo_keys_text)$'

rm -rf "$dir/profiles"
mkdir -p "$dir/profiles"
objects=()
for h in "$@"; do
    corpora=("tests/fuzz/corpus/$h")
    [ -d "build/fuzz/corpus/$h" ] && corpora+=("build/fuzz/corpus/$h")
    LLVM_PROFILE_FILE="$dir/profiles/$h.profraw" "$dir/fuzz_$h" -runs=0 "${corpora[@]}" \
        >"$dir/profiles/$h.log" 2>&1
    "$profdata" merge -sparse "$dir/profiles/$h.profraw" -o "$dir/profiles/$h.profdata"
    if [ ${#objects[@]} -eq 0 ]; then objects+=("$dir/fuzz_$h"); else objects+=("-object=$dir/fuzz_$h"); fi
done
"$profdata" merge -sparse "$dir"/profiles/*.profraw -o "$dir/all.profdata"

# report WHAT PROFDATA OBJECT...: the files' table, without its ruler line
report() {
    local what=$1 profile=$2
    shift 2
    echo "== $what"
    "$cov" report "$@" -instr-profile="$profile" "${sources[@]}" | sed '2d'
}

for h in "$@"; do
    campaign=""
    [ -d "build/fuzz/corpus/$h" ] &&
        campaign=", $(find "build/fuzz/corpus/$h" -type f | wc -l) of the campaign"
    echo "($h: $(find "tests/fuzz/corpus/$h" -type f | wc -l) committed inputs$campaign)"
    report "$h" "$dir/profiles/$h.profdata" "$dir/fuzz_$h"
done
report "all harnesses together" "$dir/all.profdata" "${objects[@]}"
echo "== the parsing functions, all harnesses together"
# functions FILE...: the per-function table of the files, without headers and rulers
functions() {
    "$cov" report -show-functions "${objects[@]}" -instr-profile="$dir/all.profdata" "$@" |
        grep -vE '^(File|Name|-----|TOTAL|$)'
}
"$cov" report -show-functions "${objects[@]}" -instr-profile="$dir/all.profdata" tuning/size.c |
    grep -m 1 '^Name'
functions tuning/table_parse.c tuning/table_load.c tuning/table_write.c tuning/size.c tuning/env.c
functions tuning/registry.c algos/sched/torus.c | awk -v re="$parsing" '$1 ~ re'
