#!/bin/sh
# SPDX-License-Identifier: MIT
# Cuts a release in the working tree (docs/packaging.md, "Release a new
# baseline"): sets the version everywhere it is written and leaves the
# result for review and commit. It does not commit, tag or write the ABI
# baseline (run `sh tools/abi.sh check`, then `sh tools/abi.sh baseline`).
#
#   sh tools/release.sh 0.2.0 [YYYY-MM-DD]
#
# Writes: project(VERSION) in CMakeLists.txt; DN_VERSION_MAJOR/MINOR/PATCH
# and DN_VERSION_STRING in include/decodenum/common.h; CHANGELOG.md's
# [Unreleased] becomes [<version>] - <date> under a new empty [Unreleased];
# debian/changelog gets <version>-1; the symbols file's "<version>~"
# minimum versions become "<version>".
set -eu
cd "$(dirname "$0")/.."
v=${1:?usage: sh tools/release.sh MAJOR.MINOR.PATCH [YYYY-MM-DD]}
date=${2:-$(date -u +%Y-%m-%d)}
case "$v" in
[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "release: $v is not MAJOR.MINOR.PATCH" >&2; exit 2 ;;
esac
major=${v%%.*}
rest=${v#*.}
minor=${rest%%.*}
patch=${rest#*.}
grep -q '^## \[Unreleased\]' CHANGELOG.md || { echo "release: no [Unreleased] in CHANGELOG.md" >&2; exit 1; }

sed -i "s/^project(decodenum VERSION [0-9.]* /project(decodenum VERSION $v /" CMakeLists.txt
sed -i -e "s/^#define DN_VERSION_MAJOR .*/#define DN_VERSION_MAJOR $major/" \
    -e "s/^#define DN_VERSION_MINOR .*/#define DN_VERSION_MINOR $minor/" \
    -e "s/^#define DN_VERSION_PATCH .*/#define DN_VERSION_PATCH $patch/" \
    -e "s/^#define DN_VERSION_STRING .*/#define DN_VERSION_STRING \"$v\"/" include/decodenum/common.h
sed -i "s/^## \[Unreleased\]/## [Unreleased]\n\n## [$v] - $date/" CHANGELOG.md
sed -i "s/ $v~\$/ $v/" debian/libdecodenum0.symbols
{
    printf 'libdecodenum (%s-1) unstable; urgency=medium\n\n' "$v"
    printf '  * Release %s (CHANGELOG.md).\n\n' "$v"
    # the entry's time: now for a release cut today, noon of an earlier or later
    # day otherwise (lintian wants each entry newer than the one below it)
    when=$(date -u -R)
    [ "$date" = "$(date -u +%Y-%m-%d)" ] || when=$(date -u -R -d "$date 12:00")
    printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' debian/control)" "$when"
    cat debian/changelog
} >debian/changelog.new
mv debian/changelog.new debian/changelog
grep -n "VERSION $v" CMakeLists.txt
grep -n "DN_VERSION_STRING" include/decodenum/common.h
grep -n "^## \[" CHANGELOG.md | head -n 3
head -n 1 debian/changelog
echo "release: $v written; review, then sh tools/abi.sh check && sh tools/abi.sh baseline"
