#!/usr/bin/env bash
# Builds a peer router from a source checkout the user points at, outside
# this repository, for same-run comparisons (bench/peers/compare.py):
#
#   bench/peers/build.sh click     ~/src/click     [PREFIX]   # kohler/click, userlevel, all elements
#   bench/peers/build.sh fastclick ~/src/fastclick [PREFIX]   # tbarbette/fastclick, userlevel, no DPDK
#
# The build happens in a copy under PREFIX (default ~/.cache/clickos-peers/KIND),
# so the checkout stays clean; the binary ends up at PREFIX/bin/click and
# the path is printed last. Needs a C++ toolchain (build-essential) and, for
# Click's all-elements build, libpcap-dev. Nothing is fetched: CI has no
# network, and compare.py skips a peer whose binary is missing.
set -euo pipefail
kind=${1:?usage: build.sh click|fastclick SOURCE_DIR [PREFIX]}
src=${2:?usage: build.sh click|fastclick SOURCE_DIR [PREFIX]}
prefix=${3:-$HOME/.cache/clickos-peers/$kind}
[ -f "$src/configure" ] || { echo "build.sh: $src has no configure script (a Click source checkout?)" >&2; exit 1; }
jobs=$(nproc)
mkdir -p "$prefix/src"
echo "build.sh: copying $src to $prefix/src" >&2
rsync -a --delete --exclude .git "$src/" "$prefix/src/" 2>/dev/null || { rm -rf "$prefix/src"; cp -r "$src" "$prefix/src"; rm -rf "$prefix/src/.git"; }
cd "$prefix/src"
case "$kind" in
click)
    ./configure --prefix="$prefix" --disable-linuxmodule --disable-bsdmodule \
        --enable-userlevel --enable-all-elements >"$prefix/configure.log" 2>&1 \
        || { echo "build.sh: configure failed, see $prefix/configure.log" >&2; exit 1; }
    ;;
fastclick)
    # FastClick's all-elements option needs LLVM headers; its default set
    # has every element the bench configurations use.
    ./configure --prefix="$prefix" --disable-linuxmodule --enable-userlevel \
        --disable-dpdk --disable-dpdk-pool --disable-dpdk-packet --enable-batch \
        >"$prefix/configure.log" 2>&1 \
        || { echo "build.sh: configure failed, see $prefix/configure.log" >&2; exit 1; }
    ;;
*) echo "build.sh: unknown peer '$kind' (click or fastclick)" >&2; exit 1 ;;
esac
echo "build.sh: building $kind with $jobs jobs (10-30 minutes on 2 cores)" >&2
make -j"$jobs" -C userlevel all >"$prefix/make.log" 2>&1 \
    || { echo "build.sh: make failed, see $prefix/make.log" >&2; tail -20 "$prefix/make.log" >&2; exit 1; }
mkdir -p "$prefix/bin"
cp userlevel/click "$prefix/bin/click"
"$prefix/bin/click" --version >/dev/null 2>&1 || true
echo "$prefix/bin/click"
