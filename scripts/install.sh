#!/usr/bin/env bash
# install.sh: `make install` and `make uninstall` (mk/install.mk, docs/install.md).
#
#   scripts/install.sh install PREFIX     copy the builds of build/ (and build/openmpi/) under
#                                         $DESTDIR$PREFIX
#   scripts/install.sh uninstall PREFIX   remove what the install there put there
#
# What goes where (PREFIX relative):
#   lib/xchg/mpich/libxchg.so      the MPICH library (build/libxchg.so); required
#   lib/xchg/openmpi/libxchg.so    the Open MPI library (build/openmpi/libxchg.so), when built
#   bin/xchgrun                    scripts/xchgrun with the version written in: it then finds
#                                  the libraries and share/xchg relative to its own location
#   bin/xchg-NAME                  every tool of the MPICH build ($INSTALL_TOOLS); required
#   bin/xchg-NAME.openmpi          the tools that run MPI ($INSTALL_MPI_TOOLS) of the Open MPI
#                                  build, when built (as Debian names mpicc.openmpi)
#   share/xchg/cluster             the emulated cluster, which xchgrun --nodes runs
#   share/xchg/install-manifest.txt  what this install put there (below)
#   share/doc/xchg/                README.md and docs/, links between them intact
#   share/modulefiles/xchg/RELEASE an environment-modules file (mk/modulefile.in): PATH and
#                                  XCHG_PREFIX
# The libraries lie in folders of their own, out of the linker's search path: they are
# preloaded, never linked, and both keep the name libxchg.so.
#
# The version is the one the build was stamped with ($BUILD/version.h), so that xchgrun, the
# tools, the library and the modulefile agree; a tree whose version moved on since (a new
# commit not built yet) gets a warning. Nothing is built here: `make` first.
#
# The manifest lists, relative to PREFIX, every file installed ("file PATH") and every folder
# the install created ("dir PATH", "dir ." for PREFIX itself), in the order of creation.
# Uninstall removes the files, then those folders that are empty, deepest first, and nothing
# else; installing again over an install removes the old one first. Entries that are absolute
# or climb out of PREFIX (..) are refused.
set -euo pipefail

die() {
    echo "install.sh: $*" >&2
    exit 1
}

root=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
MANIFEST=share/xchg/install-manifest.txt
MPICH_BUILD=$root/build
OPENMPI_BUILD=$root/build/openmpi

[ $# -eq 2 ] || die "usage: scripts/install.sh install|uninstall PREFIX"
action=$1
prefix=$2
case $prefix in
/*) ;;
*) die "PREFIX must be an absolute path, not '$prefix'" ;;
esac
prefix=${prefix%/}
dest=${DESTDIR:-}$prefix # where the files go; $prefix is where they will be used

# ---- the manifest ----

# manifest_entries FILE: its "KIND PATH" lines, each checked; dies on a bad one.
manifest_entries() {
    local kind path n=0
    while read -r kind path; do
        n=$((n + 1))
        case $kind in '' | '#'*) continue ;; esac
        case $kind/$path in
        file/?* | dir/?*) ;;
        *) die "$1:$n: expected 'file PATH' or 'dir PATH'" ;;
        esac
        case /$path/ in
        //* | */../*) die "$1:$n: '$path' is absolute or leaves the prefix" ;;
        esac
        echo "$kind $path"
    done <"$1"
}

# Remove what the manifest at $dest lists: files, then the folders it created that are empty.
uninstall() {
    local manifest=$dest/$MANIFEST entries kind path i dirs
    [ -f "$manifest" ] || die "no xchg installation at $dest ($manifest is missing)"
    entries=$(manifest_entries "$manifest")
    while read -r kind path; do
        if [ "$kind" = file ] && { [ -f "$dest/$path" ] || [ -L "$dest/$path" ]; }; then
            rm -f "$dest/$path"
        fi
    done <<<"$entries"
    rm -f "$manifest"
    mapfile -t dirs < <(awk '$1 == "dir" { print $2 }' <<<"$entries")
    for ((i = ${#dirs[@]} - 1; i >= 0; i--)); do
        path=$dest/${dirs[i]}
        [ "${dirs[i]}" = . ] && path=$dest
        rmdir "$path" 2>/dev/null || true # kept when something else lives there
    done
}

# ---- installing ----

created=() # folders this install made, relative to the prefix, parents first
files=()   # files it put there

# make_dir REL: the folder $dest/REL and its missing parents, remembering those it made.
make_dir() {
    local rel=$1 path=$dest part
    if [ ! -d "$dest" ]; then
        mkdir -p "$dest"
        created+=(.)
    fi
    [ "$rel" = . ] && return 0
    IFS=/ read -ra parts <<<"$rel"
    rel=""
    for part in "${parts[@]}"; do
        rel=${rel:+$rel/}$part
        path=$dest/$rel
        if [ ! -d "$path" ]; then
            mkdir "$path"
            created+=("$rel")
        fi
    done
}

# put MODE SOURCE REL: install SOURCE as $dest/REL.
put() {
    make_dir "$(dirname "$3")"
    install -m "$1" "$2" "$dest/$3"
    files+=("$3")
}

# The version the build in $1 was stamped with (its version.h).
built_version() {
    sed -n 's/^#define XCHG_VERSION "\(.*\)"$/\1/p' "$1/version.h" 2>/dev/null
}

# Check that the MPICH build is complete; sets version.
check_builds() {
    local tool now
    [ -f "$MPICH_BUILD/libxchg.so" ] || die "$MPICH_BUILD/libxchg.so is not built: run 'make' first"
    for tool in ${INSTALL_TOOLS:?}; do
        [ -x "$MPICH_BUILD/$tool" ] || die "$MPICH_BUILD/$tool is not built: run 'make' first"
    done
    version=$(built_version "$MPICH_BUILD")
    [ -n "$version" ] || die "$MPICH_BUILD/version.h has no version: run 'make' first"
    now=$("$root/scripts/version.sh")
    if [ "$now" != "$version" ]; then
        echo "install.sh: warning: build/ was built as $version, the tree is $now now ('make' first to install the tree as it is)" >&2
    fi
    if [ -f "$OPENMPI_BUILD/libxchg.so" ] && [ "$(built_version "$OPENMPI_BUILD")" != "$version" ]; then
        echo "install.sh: warning: build/openmpi/ was built as $(built_version "$OPENMPI_BUILD"), build/ as $version ('make MPI=openmpi' first)" >&2
    fi
}

# xchgrun with the version written in, which makes it look for everything around bin/.
install_xchgrun() {
    local tmp
    tmp=$(mktemp)
    sed "s/^installed_version=\"\"\$/installed_version=\"$version\"/" "$root/scripts/xchgrun" >"$tmp"
    if ! grep -qx "installed_version=\"$version\"" "$tmp"; then
        rm -f "$tmp"
        die "scripts/xchgrun has no line 'installed_version=\"\"' to write the version into"
    fi
    put 755 "$tmp" bin/xchgrun
    rm -f "$tmp"
}

install_modulefile() {
    local release=${version%%+*} tmp
    tmp=$(mktemp)
    sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" "$root/mk/modulefile.in" >"$tmp"
    put 644 "$tmp" "share/modulefiles/xchg/$release"
    rm -f "$tmp"
}

install_docs() {
    local doc
    put 644 "$root/README.md" share/doc/xchg/README.md
    while IFS= read -r doc; do
        put 644 "$root/$doc" "share/doc/xchg/$doc"
    done < <(cd "$root" && find docs -type f | sort)
}

write_manifest() {
    local tmp rel
    make_dir share/xchg
    tmp=$(mktemp)
    {
        echo "# xchg $version under $prefix: written by 'make install' (scripts/install.sh);"
        echo "# 'make uninstall PREFIX=$prefix' removes the files, then the folders, if empty"
        for rel in "${created[@]}"; do echo "dir $rel"; done
        for rel in "${files[@]}"; do echo "file $rel"; done
    } >"$tmp"
    install -m 644 "$tmp" "$dest/$MANIFEST"
    rm -f "$tmp"
}

install_all() {
    local tool
    check_builds
    if [ -f "$dest/$MANIFEST" ]; then
        echo "install.sh: replacing the installation at $dest"
        uninstall
    fi
    put 644 "$MPICH_BUILD/libxchg.so" lib/xchg/mpich/libxchg.so
    for tool in $INSTALL_TOOLS; do put 755 "$MPICH_BUILD/$tool" "bin/$tool"; done
    if [ -f "$OPENMPI_BUILD/libxchg.so" ]; then
        put 644 "$OPENMPI_BUILD/libxchg.so" lib/xchg/openmpi/libxchg.so
        for tool in ${INSTALL_MPI_TOOLS:-}; do
            if [ -x "$OPENMPI_BUILD/$tool" ]; then
                put 755 "$OPENMPI_BUILD/$tool" "bin/$tool.openmpi"
            fi
        done
    fi
    install_xchgrun
    put 755 "$root/scripts/cluster" share/xchg/cluster
    install_docs
    install_modulefile
    write_manifest
    echo "installed xchg $version under $dest: ${#files[@]} files (list: $dest/$MANIFEST)"
}

case $action in
install) install_all ;;
uninstall)
    uninstall
    echo "uninstalled xchg from $dest"
    ;;
*) die "unknown action '$action' (install or uninstall)" ;;
esac
