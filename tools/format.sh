#!/bin/sh
# SPDX-License-Identifier: MIT
# Formats the tracked C sources with .clang-format (clang-format 14, Debian
# 12's `clang-format` package), or with --check lists the files that differ
# and exits 1. Generated files are left as their generator writes them.
#
#   sh tools/format.sh           format in place
#   sh tools/format.sh --check   what CI runs
set -eu
cd "$(dirname "$0")/.."
cf=${CLANG_FORMAT:-clang-format}
generated="src/math_tables.c"
files=$(git ls-files '*.c' '*.h' | grep -v -x -F "$generated")
if [ "${1:-}" = "--check" ]; then
    bad=0
    for f in $files; do
        if ! "$cf" --style=file "$f" | cmp -s - "$f"; then
            echo "not formatted: $f (sh tools/format.sh)"
            bad=1
        fi
    done
    exit $bad
fi
for f in $files; do "$cf" --style=file -i "$f"; done
