# --compress beside experts compresses the mixture's own gradient reductions (the experts', the router's and the
# shared experts'), not only the dense layers': each rank's bytes over the block's data-parallel groups (the step
# line's expert_data_parallel_bytes) under int8-ef are under 40% of the exact run's (int8 carries a byte a value
# where fp32 carries four), and not zero.
#   cmake -DTRAIN=build/bin/trinity-train -P compressed_experts.cmake
set(moe --steps 3 --width 64 --layers 3 --batch 48 --experts 4 --top-k 2 --stage 0)

# The largest of the last step's expert_data_parallel_bytes over the ranks, of a run with the given flags.
function(expert_data_bytes out)
  execute_process(COMMAND "${TRAIN}" ${ARGN} ${moe} RESULT_VARIABLE code OUTPUT_VARIABLE text ERROR_VARIABLE err
                  TIMEOUT 120)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${ARGN}: exit code ${code}: ${err}")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${text}")
  set(largest "")
  foreach(line IN LISTS lines)
    string(JSON ranks ERROR_VARIABLE missing LENGTH "${line}" expert_data_parallel_bytes)
    if(missing)
      continue()
    endif()
    set(largest 0)
    math(EXPR last "${ranks} - 1")
    foreach(r RANGE ${last})
      string(JSON bytes GET "${line}" expert_data_parallel_bytes ${r})
      if(bytes GREATER largest)
        set(largest ${bytes})
      endif()
    endforeach()
  endforeach()
  if(largest STREQUAL "")
    message(FATAL_ERROR "${ARGN}: no step line with expert_data_parallel_bytes in: ${text}")
  endif()
  set(${out} ${largest} PARENT_SCOPE)
endfunction()

# With shared experts their reduction is the block's too: left in fp32, a third of these bytes would stay at four
# bytes a value and the run would send about half the exact run's.
foreach(layout "--ranks;4;--ep;2" "--ranks;8;--tp;2;--sp;--pp;2;--ep;2" "--ranks;4;--tp;2;--sp;--ep;2;--shared-experts;2")
  expert_data_bytes(exact ${layout})
  expert_data_bytes(int8 ${layout} --compress int8-ef)
  math(EXPR ceiling "${exact} * 2 / 5")
  if(int8 EQUAL 0 OR NOT int8 LESS ceiling)
    message(FATAL_ERROR "${layout}: the experts' and router's groups sent ${int8} bytes a step under int8-ef, "
                        "${exact} exact: not compressed")
  endif()
  message(STATUS "${layout}: ${int8} bytes a step under int8-ef, ${exact} exact")
endforeach()
