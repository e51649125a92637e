# A checkpoint one rank cannot write its piece of (its file's place taken by a directory: a full disk or a lost
# mount strikes one node, not all) stops every rank, each process's line telling that rank's reason, and leaves no
# iteration.json: a checkpoint missing a piece must not claim an iteration to resume at. A pipeline's piece (one
# stage's ranks write it) and a model in one piece (each rank its own file) both.
#   cmake -DTRAIN=build/bin/trinity-train -DDIR=ckpt [-DLAUNCHER="mpirun;-n;4"] -P save_refused.cmake
if(LAUNCHER)
  set(run ${LAUNCHER} "${TRAIN}" --backend mpi)
else()
  set(run "${TRAIN}" --ranks 4)
endif()
file(REMOVE_RECURSE "${DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/every_line_tells.cmake")

# Saves into ${DIR}/${case} with `blocked` (a path under it) made a directory first, and requires the refusal
# naming it: exit code 2 on threads (the refusing rank's); under mpirun, any non-zero code.
function(unwritable case blocked)
  file(MAKE_DIRECTORY "${DIR}/${case}/${blocked}")
  execute_process(COMMAND ${run} ${ARGN} --steps 2 --save-checkpoint "${DIR}/${case}"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
  string(REPLACE "." "\\." regex "cannot write ${DIR}/${case}/${blocked}")
  if(code STREQUAL "0" OR NOT code MATCHES "^[0-9]+$" OR (NOT LAUNCHER AND NOT code EQUAL 2) OR NOT err MATCHES "${regex}")
    message(FATAL_ERROR "${case}: exit code ${code}, not a refusal naming ${blocked}: ${err}")
  endif()
  every_line_tells(${case} "${err}" "${regex}")
  if(EXISTS "${DIR}/${case}/iteration.json")
    message(FATAL_ERROR "${case}: iteration.json was written beside a checkpoint missing ${blocked}")
  endif()
endfunction()

unwritable(pipeline "stage-1-of-2x1-slice-0-of-1/rank-1-of-2.ckpt.partial" --pp 2 --width 128 --layers 3)
unwritable(flat "rank-2-of-4.ckpt.partial" --width 128 --layers 3)

# The same runs, their pieces' places free, write every piece and the iteration.
execute_process(COMMAND ${run} --pp 2 --width 128 --layers 3 --steps 2 --save-checkpoint "${DIR}/whole"
                RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 0 OR NOT EXISTS "${DIR}/whole/iteration.json"
   OR NOT EXISTS "${DIR}/whole/stage-1-of-2x1-slice-0-of-1/rank-1-of-2.ckpt")
  message(FATAL_ERROR "a checkpoint with every piece's place free was not written whole: ${code} ${err}")
endif()
