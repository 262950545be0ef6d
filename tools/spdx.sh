#!/bin/sh
# SPDX-License-Identifier: MIT
# Puts the license identifier at the top of every tracked source file that
# lacks one; idempotent (a second run changes nothing).
#
#   sh tools/spdx.sh           add the line where it is missing
#   sh tools/spdx.sh --check   list the files without it; exit 1 if any
#
# C, headers, linker scripts and Sollya get a C comment as the first line;
# shell, CMake, Python and pkg-config templates a `#` line, after the `#!`
# line where there is one. src/math_tables.c is left alone: it is written by
# tools/gen_math_tables.py, and ctest math_tables_reproduce compares it with
# the generator's output byte for byte (the generator owns its first lines).
set -eu
cd "$(dirname "$0")/.."
check=0
case "${1:-}" in
--check) check=1 ;;
"") ;;
*) echo "usage: sh tools/spdx.sh [--check]" >&2; exit 2 ;;
esac

tag="SPDX-License-Identifier: MIT"
generated="src/math_tables.c"
missing=0
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

git ls-files | while IFS= read -r f; do
    [ "$f" = "$generated" ] && continue
    [ -f "$f" ] || continue
    case "$f" in
    *.c | *.h | *.map | *.sollya) line="/* $tag */" ;;
    *.sh | *.cmake | *.py | *.in | */CMakeLists.txt | CMakeLists.txt | .ci/run) line="# $tag" ;;
    *) continue ;;
    esac
    case "$f" in *.sollya) line="// $tag" ;; esac
    # already there (in the first three lines: after a #! line, or first)
    head -n 3 "$f" | grep -q "SPDX-License-Identifier:" && continue
    if [ "$check" = 1 ]; then
        echo "$f"
        echo x >>"$tmp"
        continue
    fi
    if head -n 1 "$f" | grep -q '^#!'; then
        { head -n 1 "$f"; echo "$line"; tail -n +2 "$f"; } >"$tmp.new"
    else
        { echo "$line"; cat "$f"; } >"$tmp.new"
    fi
    cat "$tmp.new" >"$f" # keeps the file's mode
    rm -f "$tmp.new"
    echo "spdx: $f"
done
if [ "$check" = 1 ] && [ -s "$tmp" ]; then
    echo "spdx: $(wc -l <"$tmp") file(s) without \"$tag\"" >&2
    exit 1
fi
exit 0
