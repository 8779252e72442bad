#!/usr/bin/env bash
# Gathers what the minimal build (-DOPSCOPE_MINIMAL=ON) needs beyond a C++
# compiler, CMake, ninja and the CUDA toolkit, from this machine's Debian
# packages into one folder a device call can carry (the GPU machine has none
# of Debian's -dev packages): fmt (used header-only there, FMT_HEADER_ONLY),
# nlohmann/json, CLI11 and GoogleTest's sources (built by the minimal tree
# itself). Nothing else: the minimal build leaves out what needs more.
#
#   tests/gpu/gather_deps.sh [DEST]     # DEST defaults to minimal_deps/ (git-ignored)
#
# Exit 2, naming the package, when one is not installed (setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:-minimal_deps}

need() {  # need PATH PACKAGE
  [ -e "$1" ] || { echo "gather_deps: $1 not found: install $2 (setup.sh does)" >&2; exit 2; }
}
need /usr/include/fmt/format-inl.h libfmt-dev
need /usr/include/nlohmann/json.hpp nlohmann-json3-dev
need /usr/include/CLI/CLI.hpp libcli11-dev
need /usr/src/googletest/googletest/src/gtest-all.cc libgtest-dev

# A fresh copy each time: a package upgrade here must not leave stale headers
# there. The files keep the packages' times (cp -a), so a tree built from an
# earlier gathering is not rebuilt by this one.
rm -rf "$dest"
mkdir -p "$dest/include" "$dest/googletest"
cp -a /usr/include/fmt /usr/include/nlohmann /usr/include/CLI "$dest/include/"
# googletest's own CMakeLists and what it reads; not its docs, samples or tests.
for part in CMakeLists.txt cmake include src; do
  cp -a "/usr/src/googletest/googletest/$part" "$dest/googletest/"
done
# Which versions travelled, for a log read later.
{
  for p in libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev; do
    dpkg-query -W -f='${Package} ${Version}\n' "$p" 2>/dev/null || echo "$p (version unknown)"
  done
} >"$dest/VERSIONS"
echo "gather_deps: $(du -sh "$dest" | cut -f1) in $dest"
