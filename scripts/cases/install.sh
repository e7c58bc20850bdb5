# shellcheck shell=bash
# install.sh: `make install` and `make uninstall` (mk/install.mk, scripts/install.sh,
# docs/install.md), sourced by run_tests.sh (begin_case, pass, fail, skip, run_logged,
# summary_status, stats_lines, $MPI, $root, $build_dir, $TESTS, $LOGS).
#
#  - installed, with the source tree hidden: `make install PREFIX=P` into a fresh temporary
#    prefix, then, in a mount namespace where the source tree is an empty tmpfs (unshare
#    --mount: root; SKIP where this machine cannot), every P/bin/* --version prints "NAME
#    VERSION" and exits 0 (NAME without .openmpi; VERSION the one its build was stamped with,
#    $BUILD/version.h), and P/bin/xchgrun runs coll_check (copied out of the tree) at 2 ranks
#    with XCHG_STATS=1 XCHG_VERBOSE=1: the program passes, the line "xchg VERSION: ..., 2
#    ranks, library P/lib/xchg/$MPI/libxchg.so" shows that the installed library of this MPI
#    served it, and the stats show calls of all three collectives. Then `make uninstall
#    PREFIX=P` must leave nothing: P itself is gone (install created it);
#  - staged (MPICH suite only; no MPI is started): `make install DESTDIR=S PREFIX=/opt/xchg`
#    twice (the second replaces the first), a file of someone else's put into S/opt/xchg/bin,
#    then `make uninstall` with the same DESTDIR and PREFIX: the files land under S/opt/xchg,
#    the modulefile names /opt/xchg (not S), the manifest lists no path twice, and afterwards
#    only the foreign file and its folders are left.
# The MPICH build (build/) must be there: make install needs it.

# install_make ARGS...: make in the source tree, without the caller's make variables.
install_make() {
    env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make --no-print-directory -C "$root" "$@"
}

# install_built_version BUILD: the version that build was stamped with.
install_built_version() {
    sed -n 's/^#define XCHG_VERSION "\(.*\)"$/\1/p' "$1/version.h" 2>/dev/null
}

# install_can_hide DIR: can this process hide a folder under a tmpfs in a mount namespace?
install_can_hide() {
    command -v unshare >/dev/null 2>&1 &&
        unshare --mount -- sh -c "mount -t tmpfs -o size=64k xchg-probe '$1'" 2>/dev/null
}

# What runs in the namespace (arguments ROOT PREFIX PROGRAM MPI): hide ROOT, then the
# --version of every installed program and a run of PROGRAM through the installed xchgrun.
# shellcheck disable=SC2016 # expanded by the bash in the namespace
install_inside='
root=$1 prefix=$2 prog=$3 mpi=$4
mount -t tmpfs -o size=64k,mode=0755 xchg-hidden "$root" || exit 97
cd / || exit 97
if [ -e "$root/Makefile" ]; then
    echo "inside: $root still shows the source tree"
    exit 98
fi
for tool in "$prefix"/bin/*; do
    out=$("$tool" --version 2>&1)
    echo "version ${tool##*/} exit=$?: $out"
done
XCHG_STATS=1 XCHG_VERBOSE=1 XCHG_WAIT=yield "$prefix/bin/xchgrun" --mpi="$mpi" -n 2 "$prog"
echo "xchgrun exit=$?"
'

# install_check_versions LOG PREFIX: why some installed program did not print "NAME VERSION"
# (empty when all did).
install_check_versions() {
    local log=$1 prefix=$2 tool name build want line
    for tool in xchgrun xchg-sched xchg-bench xchg-tune; do
        [ -e "$prefix/bin/$tool" ] || echo "$prefix/bin/$tool was not installed"
    done
    if [ -f "$root/build/openmpi/libxchg.so" ] && [ ! -e "$prefix/bin/xchg-bench.openmpi" ]; then
        echo "the Open MPI build is there but $prefix/bin/xchg-bench.openmpi was not installed"
    fi
    for tool in "$prefix"/bin/*; do
        name=${tool##*/}
        build=$root/build
        [[ $name == *.openmpi ]] && build=$root/build/openmpi
        want="${name%.openmpi} $(install_built_version "$build")"
        line=$(grep -a "^version $name exit=" "$log")
        [ "$line" = "version $name exit=0: $want" ] ||
            echo "$name --version: '${line#version "$name" }', expected exit=0 and '$want'"
    done
}

# install_check_run LOG PREFIX: why the run through the installed xchgrun does not show the
# installed library serving coll_check (empty when it does).
install_check_run() {
    local log=$1 prefix=$2 version lib coll line said=0
    version=$(install_built_version "$build_dir")
    lib=$prefix/lib/xchg/$MPI/libxchg.so
    while IFS= read -r line; do
        [[ $line == "xchg $version: "?*", 2 ranks, library $lib" ]] && said=1
    done < <(grep -a '^xchg ' "$log")
    if ! grep -aqx "xchgrun exit=0" "$log"; then
        echo "the installed xchgrun failed: $(grep -a '^xchgrun exit=' "$log")"
    elif [ "$(summary_status "$log" coll_check)" != pass ]; then
        echo "coll_check did not pass through the installed xchgrun"
    elif [ $said -eq 0 ]; then
        echo "no line 'xchg $version: MPI, 2 ranks, library $lib': the installed library did not load, or printed no version"
    else
        for coll in alltoall allgather alltoallv; do
            stats_lines "$log" $coll | grep -q 'calls=[1-9]' ||
                echo "no 'xchg: $coll NAME [...] calls=N' stats line: the installed library served no $coll"
        done
    fi
}

name="install: make install, the installed xchgrun and tools with the source tree hidden ($MPI), make uninstall"
if begin_case "$name"; then
    tmp=$(mktemp -d /tmp/xchg-install.XXXXXX)
    prefix=$tmp/prefix
    why=""
    skipped=""
    if [ ! -f "$root/build/libxchg.so" ] || [ ! -x "$TESTS/coll_check" ]; then
        why="build/libxchg.so or $TESTS/coll_check is not built (make install needs the MPICH build)"
    elif ! install_can_hide "$tmp"; then
        skipped="cannot hide the source tree here (unshare --mount and a tmpfs need root and a kernel that allows mount namespaces)"
    elif ! install_make install PREFIX="$prefix" >"$log" 2>&1; then
        why="make install PREFIX=$prefix failed"
    else
        cp "$TESTS/coll_check" "$tmp/coll_check"
        printf '%s\n' "$install_inside" >"$tmp/inside.sh"
        run_logged "$log.run" unshare --mount -- bash "$tmp/inside.sh" "$root" "$prefix" \
            "$tmp/coll_check" "$MPI"
        rc=$?
        cat "$log.run" >>"$log"
        if [ $rc -eq 97 ] || [ $rc -eq 98 ]; then
            why="could not hide the source tree (exit status $rc): $(tail -n 1 "$log.run")"
        else
            why=$(install_check_versions "$log" "$prefix"; install_check_run "$log" "$prefix")
        fi
        if [ -z "$why" ]; then
            if ! install_make uninstall PREFIX="$prefix" >>"$log" 2>&1; then
                why="make uninstall PREFIX=$prefix failed"
            elif [ -e "$prefix" ]; then
                why="make uninstall left $(find "$prefix" | head -n 5 | tr '\n' ' ')"
            fi
        fi
    fi
    if [ -n "$skipped" ]; then
        skip "$name" "$skipped"
    elif [ -n "$why" ]; then
        fail "$name" "$(head -n 1 <<<"$why")" "$log"
    else
        pass "$name" "$start"
    fi
    rm -rf "$tmp" "$log.run"
fi

name="install: make install DESTDIR=STAGE PREFIX=/opt/xchg twice, then make uninstall keeps a foreign file"
if [ "$MPI" = mpich ] && begin_case "$name"; then
    tmp=$(mktemp -d /tmp/xchg-install.XXXXXX)
    stage=$tmp/stage
    staged=$stage/opt/xchg
    release=$(install_built_version "$root/build")
    release=${release%%+*}
    why=""
    if [ ! -f "$root/build/libxchg.so" ]; then
        why="build/libxchg.so is not built"
    elif ! install_make install DESTDIR="$stage" PREFIX=/opt/xchg >"$log" 2>&1 ||
        ! install_make install DESTDIR="$stage" PREFIX=/opt/xchg >>"$log" 2>&1; then
        why="make install DESTDIR=$stage PREFIX=/opt/xchg failed"
    elif [ ! -f "$staged/lib/xchg/mpich/libxchg.so" ] || [ ! -x "$staged/bin/xchgrun" ] ||
        [ ! -x "$staged/share/xchg/cluster" ] || [ ! -f "$staged/share/doc/xchg/README.md" ]; then
        why="the library, xchgrun, share/xchg/cluster or the README is missing under $staged"
    elif ! grep -qx "prepend-path PATH /opt/xchg/bin" "$staged/share/modulefiles/xchg/$release" ||
        grep -qF "$stage" "$staged/share/modulefiles/xchg/$release"; then
        why="the modulefile share/modulefiles/xchg/$release does not put /opt/xchg/bin on PATH, or names the staging folder"
    elif [ -n "$(grep -v '^#' "$staged/share/xchg/install-manifest.txt" | sort | uniq -d)" ]; then
        why="the manifest lists a path twice after the second install"
    else
        echo "someone else's" >"$staged/bin/foreign"
        if ! install_make uninstall DESTDIR="$stage" PREFIX=/opt/xchg >>"$log" 2>&1; then
            why="make uninstall DESTDIR=$stage PREFIX=/opt/xchg failed"
        elif [ "$(cd "$stage" && find . | sort | tr '\n' ' ')" != ". ./opt ./opt/xchg ./opt/xchg/bin ./opt/xchg/bin/foreign " ]; then
            why="after uninstall $stage holds $(cd "$stage" && find . | sort | head -n 8 | tr '\n' ' '), not just opt/xchg/bin/foreign"
        fi
    fi
    if [ -z "$why" ]; then pass "$name" "$start"; else fail "$name" "$why" "$log"; fi
    rm -rf "$tmp"
fi
