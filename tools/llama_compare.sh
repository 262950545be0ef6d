#!/bin/sh
# SPDX-License-Identifier: MIT
# The decode example beside llama.cpp on the same GGUF files: tokens per
# second, and the logits digest at 1, 2 and 3 threads (docs/decode.md,
# "Against llama.cpp"). `sh tools/build.sh bench-llama` builds llama.cpp and
# calls this; to run it on builds you already have:
#
#   sh tools/llama_compare.sh [-r ROUNDS] [-n TOKENS] [-P PROMPT] LLAMA_BUILD_DIR...
#
# (-r 0: the logits digests only. -P N adds prompt processing: llama-bench
# -p N -n 0 against `decodenum decode` of an N-token prompt, every file;
# N = 0, the default, skips it.)
#
# Each LLAMA_BUILD_DIR holds bin/llama-bench, bin/llama-quantize and
# llama-logits (bench/llama_logits.c built against it). The first one's
# llama-quantize makes the Q4_K_M file. Files go to build/llama-models
# (made once; about 4 GB).
#
# Tokens per second: a TinyLlama-shaped synthetic model (22 layers, width
# 2048, 32/4 heads, FFN 5632, vocabulary 32000) in F16, BF16 and Q8_0 written by
# `decodenum decode --write-gguf`, and llama-quantize's Q4_K_M of the F16
# file. Per round, for each file and 1 and 2 threads: `llama-bench -p 0 -n
# TOKENS -r 1` of each build, then `decodenum decode -n TOKENS` (its default
# on x86: the quantized matrices repacked at load, as llama.cpp repacks its
# Q4_K weights; `--in-place` is not timed here); the rounds
# alternate the engines so a change in the host's load hits both. The
# table gives each engine's median over the rounds and the ratio of the
# medians.
#
# Logits: a small model (2 layers, width 256) in F16, BF16, Q8_0 and Q4_K_M, a
# 300-token prompt and 8 generated tokens, at 1, 2 and 3 threads: the digest
# of every logit's bits from llama-logits (flash attention auto, its
# default, and off) and from decodenum decode (and
# decodenum under DECODENUM_ISA=scalar and avx2).
set -eu

rounds=3 tokens=128 prompt_len=0
while [ $# -gt 0 ]; do
    case "$1" in
    -r) rounds=$2; shift 2 ;;
    -n) tokens=$2; shift 2 ;;
    -P) prompt_len=$2; shift 2 ;;
    *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "usage: $0 [-r ROUNDS] [-n TOKENS] [-P PROMPT] LLAMA_BUILD_DIR..." >&2; exit 2; }
dn=./build/release/decodenum
models=build/llama-models
mkdir -p "$models"
quantize="$1/bin/llama-quantize"

write_models() { # shape name, then the decode example's model options
    shape=$1
    shift
    for type in f16 bf16 q8_0; do
        f="$models/$shape-$type.gguf"
        [ -f "$f" ] || "$dn" decode --arch llama --type "$type" "$@" --write-gguf "$f"
    done
    f="$models/$shape-q4_k_m.gguf"
    [ -f "$f" ] || "$quantize" "$models/$shape-f16.gguf" "$f" Q4_K_M >/dev/null 2>&1
}
write_models tiny --layers 22 --embd 2048 --heads 32 --kv-heads 4 --ffn 5632 --vocab 32000
write_models small --layers 2 --embd 256 --heads 4 --kv-heads 2 --ffn 512 --vocab 1000

echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "llama.cpp builds: $*"
echo
# The median per (type, threads, engine) of a log of "type threads engine
# value" lines; the ratio is decodenum's over each build's.
medians() {
    sort -k1,1 -k2,2n -k3,3 -k4,4g "$1" | awk '
        { key = $1 " " $2 " " $3; v[key, ++n[key]] = $4; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
        END {
            for (i = 1; i <= k; i++) { c = n[order[i]]; m[order[i]] = (c % 2) ? v[order[i], (c + 1) / 2] : (v[order[i], c / 2] + v[order[i], c / 2 + 1]) / 2 }
            printf "%-8s %-8s %-24s %10s %10s\n", "file", "threads", "engine", "tokens/s", "decodenum/it"
            for (i = 1; i <= k; i++) { split(order[i], p, " "); mine = m[p[1] " " p[2] " decodenum"]
                all = ""; for (j = 1; j <= n[order[i]]; j++) all = all " " v[order[i], j]
                printf "%-8s %-8s %-24s %10.2f %10s   (samples:%s)\n", p[1], p[2], p[3], m[order[i]], p[3] == "decodenum" ? "" : sprintf("%.2f", mine / m[order[i]]), all }
        }'
}

if [ "$rounds" -gt 0 ]; then
    echo "tokens per second, llama-bench -p 0 -n $tokens vs decodenum decode -n $tokens, $rounds rounds"
    log=$(mktemp)
    trap 'rm -f "$log"' EXIT
    for _ in $(seq 1 "$rounds"); do
        for type in q4_k_m q8_0 f16 bf16; do
            f="$models/tiny-$type.gguf"
            for t in 1 2; do
                for b in "$@"; do
                    ts=$("$b/bin/llama-bench" -m "$f" -p 0 -n "$tokens" -t "$t" -r 1 -o csv 2>/dev/null |
                        tail -1 | awk -F'","' '{print $(NF-1)}')
                    echo "$type $t llama.cpp:$(basename "$b") $ts" >>"$log"
                done
                ts=$("$dn" decode "$f" -n "$tokens" -t "$t" | sed -n 's/.*decode \([0-9.]*\) tokens\/s.*/\1/p')
                echo "$type $t decodenum $ts" >>"$log"
            done
        done
    done
    medians "$log"
fi
if [ "$rounds" -gt 0 ] && [ "$prompt_len" -gt 0 ]; then
    echo
    echo "prompt tokens per second, llama-bench -p $prompt_len -n 0 vs decodenum decode -p <$prompt_len ids> -n 1, $rounds rounds"
    ids=$(awk -v n="$prompt_len" 'BEGIN { s = "1"; for (i = 1; i < n; i++) s = s "," ((37 * i + 11) % 31991 + 3); print s }')
    : >"$log"
    for _ in $(seq 1 "$rounds"); do
        for type in q4_k_m q8_0 f16 bf16; do
            f="$models/tiny-$type.gguf"
            for t in 1 2; do
                for b in "$@"; do
                    ts=$("$b/bin/llama-bench" -m "$f" -p "$prompt_len" -n 0 -t "$t" -r 1 -o csv 2>/dev/null |
                        tail -1 | awk -F'","' '{print $(NF-1)}')
                    echo "$type $t llama.cpp:$(basename "$b") $ts" >>"$log"
                done
                ts=$("$dn" decode "$f" -p "$ids" -n 1 -t "$t" | sed -n 's/^prompt \([0-9.]*\) tokens\/s.*/\1/p')
                echo "$type $t decodenum $ts" >>"$log"
            done
        done
    done
    medians "$log"
fi
echo
echo "logits digest, 300-token prompt + 8 tokens (small model), threads 1 / 2 / 3"
prompt=$(awk 'BEGIN { s = "1"; for (i = 1; i < 300; i++) s = s "," ((37 * i + 11) % 997 + 3); print s }')
for type in f16 bf16 q8_0 q4_k_m; do
    f="$models/small-$type.gguf"
    for b in "$@"; do
        for fa in auto off; do
            line="$type llama.cpp:$(basename "$b") flash-attention:$fa"
            for t in 1 2 3; do
                line="$line $("$b/llama-logits" "$f" -t "$t" -p "$prompt" -n 8 --fa $fa | sed -n 's/^digest //p')"
            done
            echo "$line"
        done
    done
    line="$type decodenum"
    for t in 1 2 3; do line="$line $("$dn" decode "$f" -t "$t" -p "$prompt" -n 8 --quiet | sed -n 's/^digest //p')"; done
    echo "$line"
    line="$type decodenum, 2 threads, DECODENUM_ISA=scalar / avx2:"
    for isa in scalar avx2; do
        line="$line $(DECODENUM_ISA=$isa "$dn" decode "$f" -t 2 -p "$prompt" -n 8 --quiet | sed -n 's/^digest //p')"
    done
    echo "$line"
done
