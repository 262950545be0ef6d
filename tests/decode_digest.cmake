# SPDX-License-Identifier: MIT
# The decode loop's promise end to end: `decodenum decode` prints the same
# digest of every step's logits under every ISA this machine runs
# (DECODENUM_ISA=scalar at 2 threads; avx2 / neon at 1, 2 and 3 threads), for the
# synthetic model in each weight type and architecture (the hybrid with
# Gated-DeltaNet layers too), and the same again
# when the model is written as a GGUF file and read back through mmap, its
# matrices read in place and repacked (the default on x86, where the runs
# above read repacked matrices and the scalar one reads them in place), and
# for every number of prompt positions a pass (-b).
#   cmake -DCLI=<decodenum> -DWORK=<dir> [-DISAS=scalar;avx2] [-DEMULATOR=qemu-aarch64] -P decode_digest.cmake
if(NOT ISAS)
  set(ISAS scalar avx2 neon)
endif()
file(MAKE_DIRECTORY ${WORK})

function(digest_of out_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env DECODENUM_ISA=${ISA} ${EMULATOR} ${CLI} decode --quiet ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT text MATCHES "digest ([0-9a-f]+)")
    message(FATAL_ERROR "decode ${ARGN} (isa ${ISA}) failed (${rc}): ${text} ${err}")
  endif()
  set(${out_var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

# A run's digest against its configuration's first (ref, empty before the
# first run; args names the configuration), counted in n.
macro(agree digest what)
  if(ref STREQUAL "")
    set(ref ${digest})
  elseif(NOT "${digest}" STREQUAL "${ref}")
    message(FATAL_ERROR "digest differs: ${args} ${what}: ${digest}, first run ${ref}")
  endif()
  math(EXPR n "${n} + 1")
endmacro()

# each configuration: its options (space-separated); the first run's digest
# is the reference
set(configs
  "--arch llama --type f16 -p 1,7,42 --layers 2"
  "--arch llama --type bf16 -p 1,7,42 --layers 2"
  "--arch llama --type q8_0 -p 1,7,42 --layers 2"
  "--arch llama --type q4_k_m -p 1,7,42 --layers 2"
  "--arch llama --type q4_k --seed 5 --layers 2"
  "--arch llama --type q5_k --seed 6 --layers 2"
  "--arch llama --type q6_k --seed 7 --layers 2 --tied"
  "--arch llama --type q8_0 --kv int8 -p 3,4 --layers 2"
  "--arch qwen2 --type q4_k_m --heads 4 --kv-heads 4 --layers 2"
  "--arch qwen3 --type f16 --tied --layers 2"
  "--arch mistral --type q8_0 --kv-heads 1 --layers 2"
  "--type q4_k_m -p 1,7,42"
  "--arch hybrid --type f16 --kv int8 --layers 4 --seed 3")
set(n 0)
foreach(cfg IN LISTS configs)
  string(REPLACE " " ";" args "${cfg}")
  set(ref "")
  foreach(ISA IN LISTS ISAS)
    # the reference ISA (scalar, the slowest) at 2 threads, the others at 1, 2, 3
    set(threads 1 2 3)
    if(ISA STREQUAL "scalar")
      set(threads 2)
    endif()
    foreach(t IN LISTS threads)
      digest_of(d ${args} --ffn 256 -n 8 -t ${t})
      agree(${d} "isa ${ISA} threads ${t}")
    endforeach()
  endforeach()
  list(APPEND digests ${ref})
  message(STATUS "${args}: ${ref} (every ISA and thread count)")
endforeach()

# the same model through a file: --write-gguf, then the file read by mmap
set(ISA scalar)
execute_process(COMMAND ${EMULATOR} ${CLI} decode --type q4_k_m --layers 2 --write-gguf ${WORK}/synthetic.gguf RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--write-gguf failed")
endif()
digest_of(from_memory --arch llama --type q4_k_m --layers 2 -n 8)
foreach(ISA IN LISTS ISAS)
  foreach(layout --in-place --repack)
    digest_of(from_file ${WORK}/synthetic.gguf -n 8 -t 2 ${layout})
    if(NOT from_file STREQUAL from_memory)
      message(FATAL_ERROR "the written file ${layout} decodes to ${from_file}, the model in memory to ${from_memory}")
    endif()
  endforeach()
endforeach()

# the prompt's batches (-b): a 40-token prompt one position a pass, seven,
# and the default (all 40 in one), the same digest under every ISA
set(long_prompt 1)
foreach(i RANGE 1 39)
  math(EXPR id "(37 * ${i} + 11) % 500 + 3")
  string(APPEND long_prompt ",${id}")
endforeach()
foreach(cfg "--arch llama --type q4_k_m" "--arch qwen3 --type f16 --kv int8" "--arch qwen2 --type q8_0")
  string(REPLACE " " ";" args "${cfg}")
  set(ref "")
  foreach(ISA IN LISTS ISAS)
    foreach(b 1 7 64)
      digest_of(d ${args} --layers 2 --ffn 256 -p ${long_prompt} -n 4 -t 2 -b ${b})
      agree(${d} "isa ${ISA} batch ${b}")
    endforeach()
  endforeach()
  message(STATUS "${args}, 40-token prompt: ${ref} (every ISA and batch)")
endforeach()

# different models must give different digests (the digest sees the logits)
list(REMOVE_DUPLICATES digests)
list(LENGTH digests distinct)
list(LENGTH configs total)
if(NOT distinct EQUAL total)
  message(FATAL_ERROR "two configurations gave the same digest: ${digests}")
endif()
message(STATUS "decode digest: ${n} runs agree")
