#!/usr/bin/env bash
# Install what xchg needs, non-interactively, skipping packages that are already present.
# Usage: scripts/setup.sh [mpich|openmpi] [extra-package ...]
set -euo pipefail
mpi=${1:-mpich}
shift || true
case "$mpi" in
mpich) pkgs=(mpich libmpich-dev libhwloc-dev hwloc gfortran make gcc) ;;
openmpi) pkgs=(openmpi-bin libopenmpi-dev libhwloc-dev hwloc gfortran make gcc) ;;
*) echo "setup.sh: unknown MPI '$mpi' (mpich or openmpi)" >&2; exit 2 ;;
esac
pkgs+=("$@")
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup.sh: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
