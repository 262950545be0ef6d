#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints the longest functions and files of the C sources and headers and
# fails when one is past the limit: a function past MAX_FUNC lines or a file
# past MAX_FILE lines makes the exit status 1.
#
#   sh tools/sizes.sh                 src/ bench/ tests/ cli/ examples/, top 10
#   sh tools/sizes.sh -n 25           the 25 longest
#   sh tools/sizes.sh -n 0            only what is over the limits
#   sh tools/sizes.sh tests bench     other folders or files
#   sh tools/sizes.sh -h              this text
#
# Output: `lines file:line signature`, longest first, for the functions, then
# `lines file` for the files, then every function and file over its limit.
#
# A function body runs from a line beginning `{` to the next line beginning
# `}` (the project's style puts function braces at column 0), both counted.
# A `{` at column 0 counts only when the last code line before it ends with
# `)` (a declarator), so struct bodies and initializer lists (`= \n{`) are not
# functions; lines of a macro (after a line ending `\`) and of a /* */ comment
# are skipped. POSIX sh and awk only.
MAX_FUNC=80
MAX_FILE=800
top=10

set -eu
cd "$(dirname "$0")/.."
case "${1:-}" in
-h|--help) sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
-n) top=${2:?"-n needs a number"}; shift 2 ;;
esac
case "$top" in ''|*[!0-9]*) echo "sizes.sh: -n wants a number, not '$top'" >&2; exit 2 ;; esac
[ $# -gt 0 ] || set -- src bench tests cli examples

files=$(find "$@" -type f \( -name '*.c' -o -name '*.h' \) 2>/dev/null | LC_ALL=C sort)
[ -n "$files" ] || { echo "sizes.sh: no C sources under $*" >&2; exit 2; }

tmp=${TMPDIR:-/tmp}/dn_sizes.$$
trap 'rm -f "$tmp".f "$tmp".l' EXIT INT TERM

# One row per function: lines<TAB>file:line<TAB>signature.
# shellcheck disable=SC2086
awk '
FNR == 1 { infn = 0; incomment = 0; inmacro = 0; last = ""; sig = ""; sigline = 0 }
{
    line = $0
    sub(/\r$/, "", line)
    # macro continuation lines, including the #define line itself
    if (inmacro) { inmacro = (line ~ /\\$/); next }
    if (line ~ /^[ \t]*#/) { inmacro = (line ~ /\\$/); next }
    # block comments: drop the commented part of the line
    code = line
    if (incomment) {
        if (index(code, "*/") == 0) next
        code = substr(code, index(code, "*/") + 2)
        incomment = 0
    }
    while ((p = index(code, "/*")) > 0) {
        rest = substr(code, p + 2)
        q = index(rest, "*/")
        if (q == 0) { code = substr(code, 1, p - 1); incomment = 1; break }
        code = substr(code, 1, p - 1) " " substr(rest, q + 2)
    }
    sub(/\/\/.*/, "", code)
    if (infn) {
        if (code ~ /^}/) {
            printf "%d\t%s:%d\t%s\n", FNR - start + 1, FILENAME, sigline, sig
            infn = 0
        }
        next
    }
    if (code ~ /^{/) {
        if (last ~ /\)[ \t]*$/) { infn = 1; start = FNR }
        last = code
        next
    }
    # a declarator starts at column 0 with a name; keep the line that opens
    # its parameter list
    if (code ~ /^[A-Za-z_]/ && code ~ /\(/) {
        sig = code
        sub(/[ \t]+$/, "", sig)
        if (length(sig) > 90) sig = substr(sig, 1, 87) "..."
        sigline = FNR
    }
    if (code !~ /^[ \t]*$/) last = code
}
' $files | LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2,2 > "$tmp".f

# shellcheck disable=SC2086
wc -l $files | awk '$2 != "total" { printf "%d\t%s\n", $1, $2 }' |
    LC_ALL=C sort -t "$(printf '\t')" -k1,1nr -k2,2 > "$tmp".l

if [ "$top" -gt 0 ]; then
    echo "longest functions (limit $MAX_FUNC lines):"
    head -n "$top" "$tmp".f | awk -F '\t' '{ printf "%6d %s %s\n", $1, $2, $3 }'
    echo "longest files (limit $MAX_FILE lines):"
    head -n "$top" "$tmp".l | awk -F '\t' '{ printf "%6d %s\n", $1, $2 }'
fi

over_f=$(awk -F '\t' -v m="$MAX_FUNC" '$1 > m' "$tmp".f | wc -l)
over_l=$(awk -F '\t' -v m="$MAX_FILE" '$1 > m' "$tmp".l | wc -l)
if [ "$over_f" -eq 0 ] && [ "$over_l" -eq 0 ]; then
    echo "sizes: no function over $MAX_FUNC lines, no file over $MAX_FILE"
    exit 0
fi
if [ "$over_f" -gt 0 ]; then
    echo "functions over $MAX_FUNC lines: $over_f"
    awk -F '\t' -v m="$MAX_FUNC" '$1 > m { printf "%6d %s %s\n", $1, $2, $3 }' "$tmp".f
fi
if [ "$over_l" -gt 0 ]; then
    echo "files over $MAX_FILE lines: $over_l"
    awk -F '\t' -v m="$MAX_FILE" '$1 > m { printf "%6d %s\n", $1, $2 }' "$tmp".l
fi
exit 1
