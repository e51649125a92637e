# A pipeline's checkpoint (trinity-train --pp 2 on 4 ranks: each stage's dense layers in a directory of their own)
# with one piece damaged, one piece (or, re-sliced, one tensor slice) from another run, or beside a model saved at
# another layout is refused on resume. Only the second stage's ranks read its piece, so the first stage's must stop too rather than wait in a
# collective for ranks that left: each case must end within its timeout, non-zero, naming what is wrong.
#   cmake -DTRAIN=build/bin/trinity-train -DDIR=ckpt [-DLAUNCHER="mpirun;-n;4"] -P pieces_refused.cmake
if(LAUNCHER)
  set(run ${LAUNCHER} "${TRAIN}" --backend mpi)
else()
  set(run "${TRAIN}" --ranks 4)
endif()
set(model --pp 2 --width 128 --layers 3)
file(REMOVE_RECURSE "${DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/every_line_tells.cmake")
foreach(steps 2 3)
  execute_process(COMMAND ${run} ${model} --steps ${steps} --save-checkpoint "${DIR}/after-${steps}"
                  RESULT_VARIABLE saved OUTPUT_QUIET TIMEOUT 60)
  if(NOT saved EQUAL 0)
    message(FATAL_ERROR "saving the checkpoint after ${steps} steps failed: ${saved}")
  endif()
endforeach()
set(second "stage-1-of-2x1-slice-0-of-1")

# Resumes the checkpoint in ${DIR}/${case} and requires a refusal matching `regex` (exit code 2 on threads; under
# mpirun, whatever non-zero code it reports for the processes that stopped). Every process's line must tell the
# reason, the peers of a refusing rank too: mpirun aborts the rest when the first exits, and may print only its.
function(refused case regex)
  execute_process(COMMAND ${run} ${model} --steps 1 --load-checkpoint "${DIR}/${case}"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
  if(code STREQUAL "0" OR NOT code MATCHES "^[0-9]+$" OR (NOT LAUNCHER AND NOT code EQUAL 2) OR NOT err MATCHES "${regex}")
    message(FATAL_ERROR "${case}: exit code ${code}, not a refusal matching '${regex}': ${err}")
  endif()
  every_line_tells(${case} "${err}" "${regex}")
endfunction()

file(COPY "${DIR}/after-2/" DESTINATION "${DIR}/damaged")
file(WRITE "${DIR}/damaged/${second}/rank-1-of-2.ckpt" "damaged")
refused(damaged "checkpoint\\.[a-z_]+: [^\n]*${second}/rank-1-of-2\\.ckpt")

file(COPY "${DIR}/after-2/" DESTINATION "${DIR}/foreign")
file(REMOVE_RECURSE "${DIR}/foreign/${second}")
file(COPY "${DIR}/after-3/${second}" DESTINATION "${DIR}/foreign")
refused(foreign "checkpoint: the pieces of .* had taken 2 and 3 steps: they come from different runs")

file(COPY "${DIR}/after-2/" DESTINATION "${DIR}/two-layouts")
execute_process(COMMAND ${run} --width 128 --layers 3 --steps 1 --save-checkpoint "${DIR}/two-layouts"
                RESULT_VARIABLE saved OUTPUT_QUIET TIMEOUT 60)
if(NOT saved EQUAL 0)
  message(FATAL_ERROR "saving a model in one piece beside the pipeline's failed: ${saved}")
endif()
refused(two-layouts "holds a model saved at two layouts \\(--pp 1 --vpp 1 --tp 1, and --pp 2 --vpp 1 --tp 1\\)|holds a model saved at two layouts \\(--pp 2 --vpp 1 --tp 1, and --pp 1 --vpp 1 --tp 1\\)")

# A directory's name is input too: counts past the layers are refused as what they are, before they multiply
# (2^32 x 2^32 wraps to 0 in 64 bits, and the directory was taken for no split at all).
file(MAKE_DIRECTORY "${DIR}/hostile/stage-0-of-4294967296x4294967296-slice-0-of-1")
refused(hostile "--layers: its 4294967296 pipeline ranks of 4294967296 chunks hold more chunks than layers")
# and a slice count past the widths is refused by them, before a directory a slice is looked for.
file(MAKE_DIRECTORY "${DIR}/hostile-slices/stage-0-of-1x1-slice-0-of-4294967296")
refused(hostile-slices "--width: [^\n]*split each layer over 4294967296 tensor-parallel ranks, which do not split layer [0-3]'s 128 (outputs|inputs)")

# Re-slicing joins a layer's tensor slices: one of them from another run is refused by the steps it had taken.
foreach(steps 2 3)
  execute_process(COMMAND ${run} --tp 2 ${model} --steps ${steps} --save-checkpoint "${DIR}/sliced-after-${steps}"
                  RESULT_VARIABLE saved OUTPUT_QUIET TIMEOUT 60)
  if(NOT saved EQUAL 0)
    message(FATAL_ERROR "saving the tensor-parallel checkpoint after ${steps} steps failed: ${saved}")
  endif()
endforeach()
set(slice "stage-0-of-2x1-slice-1-of-2")
file(COPY "${DIR}/sliced-after-2/" DESTINATION "${DIR}/foreign-slice")
file(REMOVE_RECURSE "${DIR}/foreign-slice/${slice}")
file(COPY "${DIR}/sliced-after-3/${slice}" DESTINATION "${DIR}/foreign-slice")
refused(foreign-slice "${slice} holds layer [01] as [0-9]+ values after 3 steps;[^\n]*slice 0 had taken 2: the slices come from another model or run")

# Whole, the same directory resumes: its first line is step 3.
execute_process(COMMAND ${run} ${model} --steps 1 --load-checkpoint "${DIR}/after-2" RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"step\":3")
  message(FATAL_ERROR "the whole checkpoint gave exit code ${code}, output: ${out}${err}")
endif()
