#!/bin/sh
# SPDX-License-Identifier: MIT
# The ABI of libdecodenum.so.0 against its committed baseline (docs/abi.md,
# docs/packaging.md). Needs abigail-tools (abidw, abidiff), cmake and a C
# compiler.
#
#   sh tools/abi.sh baseline   build the library with -g and write its ABI,
#                              as seen through the public headers, to
#                              abi/libdecodenum.so.0.abi (commit it)
#   sh tools/abi.sh check      build the same way and compare with the
#                              baseline; fails on a removed or changed function
#                              or type (added functions are fine)
#   sh tools/abi.sh map        list the DN_API functions of include/ that
#                              cmake/libdecodenum.map does not export yet
#   sh tools/abi.sh selftest   shows that `check` fails: a scratch copy of the
#                              tree with one public function removed from the
#                              map and another's return type changed
#
# Build trees go to build/abi (build/abi-scratch for selftest).
set -eu
cd "$(dirname "$0")/.."
root=$PWD
baseline=abi/libdecodenum.so.0.abi
what=${1:-check}
jobs=${DN_JOBS:-2}

# build_lib <source dir> <build dir>: the shared library alone, -g, the
# library's own optimisation (DECODENUM_OPT_FLAGS) as in every build.
build_lib() {
    cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS="-g -ffile-prefix-map=$(cd "$1" && pwd)=." \
        -DDECODENUM_BUILD_TESTS=OFF -DDECODENUM_BUILD_BENCH=OFF -DDECODENUM_BUILD_EXAMPLES=OFF \
        -DDECODENUM_BUILD_CLI=OFF -DDECODENUM_BUILD_STATIC=OFF -DBUILD_SHARED_LIBS=ON >/dev/null
    cmake --build "$2" --target decodenum -j "$jobs" >/dev/null
}

# dump <library> <headers dir> <out>: the ABI the public headers describe
dump() {
    abidw --headers-dir "$2" --drop-private-types --no-show-locs --no-corpus-path \
        --no-comp-dir-path --out-file "$3" "$1"
}

# compare <baseline xml> <library> <headers dir>: abidiff, filtered to what
# breaks programs: added functions are reported but pass.
compare() {
    set +e
    abidiff --no-added-syms --headers-dir2 "$3" --drop-private-types "$1" "$2"
    rc=$?
    set -e
    # abidiff's status is a bit mask: 1 error, 2 usage, 4 ABI change,
    # 8 incompatible change. With added functions left out, any change fails.
    if [ "$rc" -ne 0 ]; then
        echo "abi: libdecodenum's ABI differs from $1 (abidiff status $rc)" >&2
        return 1
    fi
    echo "abi: no removed or changed function or type against $1"
}

case "$what" in
baseline)
    build_lib "$root" build/abi
    mkdir -p abi
    dump build/abi/libdecodenum.so include "$baseline"
    echo "abi: wrote $baseline ($(grep -c '<elf-symbol ' "$baseline") symbols); commit it"
    ;;
check)
    [ -f "$baseline" ] || { echo "abi: no $baseline; run sh tools/abi.sh baseline" >&2; exit 1; }
    build_lib "$root" build/abi
    compare "$baseline" build/abi/libdecodenum.so include
    ;;
map)
    missing=0
    for f in $(grep -ho 'DN_API[^;{(]*[ *]dn_[a-z0-9_]* *(' include/decodenum.h include/decodenum/*.h |
        sed 's/.*[ *]\(dn_[a-z0-9_]*\) *($/\1/' | sort -u); do
        if ! grep -q "^ *$f;" cmake/libdecodenum.map; then
            echo "    $f;"
            missing=1
        fi
    done
    if [ "$missing" = 1 ]; then
        node=$(grep -o '^DECODENUM_[0-9.]*' cmake/libdecodenum.map | tail -n 1)
        echo "abi: add the lines above to $node in cmake/libdecodenum.map (alphabetically)" >&2
        exit 1
    fi
    echo "abi: every DN_API function is in cmake/libdecodenum.map"
    ;;
selftest)
    [ -f "$baseline" ] || { echo "abi: no $baseline" >&2; exit 1; }
    scratch=build/abi-scratch
    rm -rf "$scratch"
    mkdir -p "$scratch/src"
    git ls-files -z | (cd "$root" && xargs -0 tar cf -) | tar xf - -C "$scratch/src"
    # remove: dn_fmax (DECODENUM_0.1) is no longer exported
    sed -i '/^ *dn_fmax;$/d' "$scratch/src/cmake/libdecodenum.map"
    # change: dn_version returns uint64_t instead of unsigned
    sed -i 's/^DN_API unsigned dn_version(void);/DN_API uint64_t dn_version(void);/' \
        "$scratch/src/include/decodenum/common.h"
    sed -i 's/^unsigned dn_version(void)/uint64_t dn_version(void)/' "$scratch/src/src/status.c"
    grep -q 'uint64_t dn_version' "$scratch/src/include/decodenum/common.h"
    grep -q '^uint64_t dn_version' "$scratch/src/src/status.c"
    build_lib "$scratch/src" "$scratch/build"
    if out=$(compare "$baseline" "$scratch/build/libdecodenum.so" "$scratch/src/include" 2>&1); then
        echo "$out"
        echo "abi selftest: FAIL, abidiff accepted a removed and a changed function" >&2
        exit 1
    fi
    echo "$out"
    case "$out" in *dn_fmax*) ;; *) echo "abi selftest: FAIL, the removed dn_fmax not reported" >&2; exit 1 ;; esac
    case "$out" in *dn_version*) ;; *) echo "abi selftest: FAIL, the changed dn_version not reported" >&2; exit 1 ;; esac
    echo "abi selftest: PASS, check fails on the removed dn_fmax and the changed dn_version"
    ;;
*)
    echo "usage: sh tools/abi.sh baseline|check|map|selftest" >&2
    exit 2
    ;;
esac
