#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds the Debian packages from the working tree and checks them
# (docs/packaging.md): a copy of the tracked files in build/deb/src, then
# `dpkg-buildpackage -us -uc -b` there (tests run by dh_auto_test), then
# lintian on the result, which must report no error and no warning. The
# .debs, .buildinfo and .changes land in build/deb/.
#
#   sh tools/deb.sh              build and lintian
#   sh tools/deb.sh --autopkgtest   also install the .debs, run
#                                   debian/tests/consumer, remove them again
set -eu
cd "$(dirname "$0")/.."
root=$PWD
out=build/deb
rm -rf "$out"
mkdir -p "$out/src"
git ls-files -z | xargs -0 tar cf - | tar xf - -C "$out/src"
cd "$out/src"
DEB_BUILD_OPTIONS="parallel=${DN_JOBS:-2} ${DEB_BUILD_OPTIONS:-}" dpkg-buildpackage -us -uc -b
cd ..
changes=$(ls ./*.changes)
echo "== lintian $changes"
# --fail-on error,warning: any error or warning fails; overrides (with their
# reasons) live in debian/*.lintian-overrides.
lintian --fail-on error,warning --display-info "$changes"
echo "deb: $(ls ./*.deb | tr '\n' ' ')"

if [ "${1:-}" = "--autopkgtest" ]; then
    # what autopkgtest's consumer test does, on this machine's installed
    # packages (apt-get installs their dependencies)
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        ./libdecodenum0_*.deb ./libdecodenum-dev_*.deb ./decodenum-tools_*.deb
    rc=0
    (cd src && AUTOPKGTEST_TMP=$(mktemp -d) sh debian/tests/consumer) || rc=$?
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq libdecodenum0 libdecodenum-dev decodenum-tools
    [ "$rc" = 0 ] || { echo "deb: the autopkgtest consumer failed" >&2; exit 1; }
    echo "deb: the autopkgtest consumer passed against the installed packages"
fi
