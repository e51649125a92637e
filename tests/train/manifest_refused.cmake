# A checkpoint's manifest (what trinity-train resumes by: its world size, steps, iteration and every piece with
# its size and checksum) edited, cut short or removed is refused on resume with exit code 2, naming
# checkpoint.manifest and the fix; the states beside it are a real run's, saved into DIR first with two steps.
#   cmake -DTRAIN=build/bin/trinity-train -DDIR=ckpt -P manifest_refused.cmake
file(REMOVE_RECURSE "${DIR}")
execute_process(COMMAND "${TRAIN}" --ranks 2 --steps 2 --save-checkpoint "${DIR}" RESULT_VARIABLE saved OUTPUT_QUIET)
if(NOT saved EQUAL 0)
  message(FATAL_ERROR "saving the checkpoint failed: ${saved}")
endif()
file(READ "${DIR}/checkpoint.manifest" original)
string(REPLACE "iteration 2" "iteration 7" later "${original}")
string(REPLACE "world_size 2" "world_size 4" wider "${original}")
string(REPLACE "rank-1-of-2.ckpt" "../../rank-1-of-2.ckpt" escaping "${original}")
string(SUBSTRING "${original}" 0 40 cut)
string(REPLACE "\n" "\n\n" spaced "${original}")
set(cases later wider escaping cut spaced)
set(later_regex "the checksum does not match the lines above it")
set(wider_regex "the checksum does not match the lines above it")
set(escaping_regex "the checksum does not match the lines above it")
set(cut_regex "does not end with its checksum line")
set(spaced_regex "the last line is not")
foreach(case IN LISTS cases)
  file(WRITE "${DIR}/checkpoint.manifest" "${${case}}")
  execute_process(COMMAND "${TRAIN}" --ranks 2 --steps 1 --load-checkpoint "${DIR}"
                  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT code EQUAL 2 OR NOT err MATCHES "checkpoint.manifest: [^\n]*${${case}_regex}[^\n]*Fix: load another checkpoint"
     OR out MATCHES "\"loss\"")
    message(FATAL_ERROR "a manifest ${case} gave exit code ${code}, not 2 with the refusal: ${err}${out}")
  endif()
endforeach()
# Restored, it is taken: the run resumes at iteration 2 (its first line is step 3).
file(WRITE "${DIR}/checkpoint.manifest" "${original}")
execute_process(COMMAND "${TRAIN}" --ranks 2 --steps 1 --load-checkpoint "${DIR}" RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"step\":3")
  message(FATAL_ERROR "the restored manifest gave exit code ${code}, output: ${out}${err}")
endif()
