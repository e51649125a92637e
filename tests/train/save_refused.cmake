# What a save does to the directory it is given: it replaces a checkpoint whole (another world size's pieces
# included) and nothing else. A directory that holds files but no manifest, a file in the checkpoint's place, or
# something in the way of the staging directory is refused by every process before any state is written, and left
# as it was; a piece no rank of a world can write stops every rank and leaves the previous checkpoint whole.
#   cmake -DTRAIN=build/bin/trinity-train -DDIR=ckpt [-DLAUNCHER="mpirun;-n;4"] -P save_refused.cmake
if(LAUNCHER)
  set(run ${LAUNCHER} "${TRAIN}" --backend mpi)
else()
  set(run "${TRAIN}" --ranks 4)
endif()
file(REMOVE_RECURSE "${DIR}")
file(MAKE_DIRECTORY "${DIR}")
include("${CMAKE_CURRENT_LIST_DIR}/every_line_tells.cmake")

# Saves into ${DIR}/${target} and requires the refusal `tail` on every process's line: rank 0's, which names the
# flag, and under mpirun the others', which say rank 0 failed and why.
function(save_refused case target tail)
  set(regex "(--save-checkpoint|failed): checkpoint: [^\n]*${tail}")
  execute_process(COMMAND ${run} --width 128 --layers 3 --steps 2 --save-checkpoint "${DIR}/${target}"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
  if(code STREQUAL "0" OR NOT code MATCHES "^[0-9]+$" OR (NOT LAUNCHER AND NOT code EQUAL 2) OR NOT err MATCHES "${regex}")
    message(FATAL_ERROR "${case}: exit code ${code}, not a refusal matching '${regex}': ${err}")
  endif()
  every_line_tells(${case} "${err}" "${regex}")
endfunction()

# A folder of the user's: refused, its file untouched.
file(WRITE "${DIR}/notes/plan.txt" "keep me")
save_refused(notes notes "notes holds files but no checkpoint.manifest")
file(READ "${DIR}/notes/plan.txt" kept)
if(NOT kept STREQUAL "keep me" OR EXISTS "${DIR}/notes/rank-0-of-4.ckpt")
  message(FATAL_ERROR "a refused save changed the folder it was refused")
endif()
# A file where the checkpoint would go, and a file where its staging directory would go.
file(WRITE "${DIR}/a-file" "x")
save_refused(file a-file "a-file exists and is not a directory")
file(WRITE "${DIR}/.blocked.saving" "x")
save_refused(staging blocked "\\.blocked\\.saving is in the way of the save's staging directory")

# The stale pieces of the issue: a checkpoint of 4 ranks, then one of 2 saved into the same directory. The second
# replaces the first whole: no rank-*-of-4 piece is left, and a run resumes at the second's iteration.
if(NOT LAUNCHER)
  foreach(ranks 4 2)
    execute_process(COMMAND "${TRAIN}" --ranks ${ranks} --width 128 --layers 3 --steps ${ranks} --save-checkpoint "${DIR}/stale"
                    RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
    if(NOT code EQUAL 0)
      message(FATAL_ERROR "saving on ${ranks} ranks failed: ${code} ${err}")
    endif()
  endforeach()
  file(GLOB left "${DIR}/stale/*-of-4.ckpt")
  file(GLOB staged "${DIR}/.stale.saving")
  if(left OR staged OR NOT EXISTS "${DIR}/stale/rank-1-of-2.ckpt")
    message(FATAL_ERROR "a save on 2 ranks left another world size's pieces (${left}) or its staging (${staged})")
  endif()
  file(STRINGS "${DIR}/stale/checkpoint.manifest" manifest)
  if(NOT manifest MATCHES "world_size 2;step 2;iteration 2;layout ranks=2,tp=1,pp=1")
    message(FATAL_ERROR "the manifest does not describe the save on 2 ranks: ${manifest}")
  endif()
  execute_process(COMMAND "${TRAIN}" --ranks 3 --width 128 --layers 3 --steps 1 --load-checkpoint "${DIR}/stale"
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT code EQUAL 0 OR NOT out MATCHES "\"step\":3")
    message(FATAL_ERROR "the replaced checkpoint did not resume at step 3: ${code} ${out}${err}")
  endif()
endif()

# A piece some ranks cannot write, where the others can: the path of rank 10's piece is one byte past Linux's
# PATH_MAX (4096 with its NUL) where rank 9's just fits. Every rank stops with the failing rank's reason, and the
# checkpoint saved there before by 10 ranks is left whole: a run resumes from it.
if(NOT LAUNCHER)
  set(parent "${DIR}/long")
  string(LENGTH "${parent}" length)
  string(REPEAT "p" 200 part)
  while(length LESS 3859)
    string(APPEND parent "/${part}")
    string(LENGTH "${parent}" length)
  endwhile()
  math(EXPR pad "4059 - ${length} - 1")
  string(REPEAT "q" ${pad} last)
  string(APPEND parent "/${last}")
  string(LENGTH "${parent}" length)
  if(NOT length EQUAL 4059)
    message(FATAL_ERROR "the padded folder is ${length} bytes, not 4059")
  endif()
  file(MAKE_DIRECTORY "${parent}")
  set(target "${parent}/c")
  execute_process(COMMAND "${TRAIN}" --ranks 10 --width 128 --layers 3 --steps 2 --save-checkpoint "${target}"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "the 10 ranks' save, whose paths fit, failed: ${code} ${err}")
  endif()
  execute_process(COMMAND "${TRAIN}" --ranks 12 --width 128 --layers 3 --steps 3 --save-checkpoint "${target}"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
  set(regex "rank-1[01]-of-12\\.ckpt\\.partial")
  if(NOT code EQUAL 2 OR NOT err MATCHES "${regex}")
    message(FATAL_ERROR "a save whose rank 10 cannot write its piece gave ${code}, not a refusal naming it: ${err}")
  endif()
  every_line_tells(unwritable "${err}" "${regex}")
  execute_process(COMMAND "${TRAIN}" --ranks 10 --width 128 --layers 3 --steps 1 --load-checkpoint "${target}"
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT code EQUAL 0 OR NOT out MATCHES "\"step\":3")
    message(FATAL_ERROR "the checkpoint before the failed save did not resume at step 3: ${code} ${out}${err}")
  endif()
endif()
