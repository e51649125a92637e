# A checkpoint's iteration.json (trinity-train's loop position beside the states) written over with each value
# below is refused on resume with exit code 2, naming checkpoint.iteration and the fix; the states beside it are a
# real run's, saved into DIR first with two steps.
#   cmake -DTRAIN=build/bin/trinity-train -DDIR=ckpt -P iteration_refused.cmake
execute_process(COMMAND "${TRAIN}" --ranks 2 --steps 2 --save-checkpoint "${DIR}" RESULT_VARIABLE saved OUTPUT_QUIET)
if(NOT saved EQUAL 0)
  message(FATAL_ERROR "saving the checkpoint failed: ${saved}")
endif()
set(values
  "{\"iteration\": 1}"                 # fewer iterations than the states' 2 steps: another run's
  "{\"iteration\": -3}"
  "{\"iteration\": 2.5}"
  "{\"iteration\": \"3\"}"
  "{\"iteration\": 3, \"epoch\": 1}"   # an unknown key
  "{\"iteraton\": 3}"                  # a misspelt one
  "{\"iteration\": 99999999999999999999}"
  "[3]"
  "not json")
foreach(value IN LISTS values)
  file(WRITE "${DIR}/iteration.json" "${value}")
  execute_process(COMMAND "${TRAIN}" --ranks 2 --steps 1 --load-checkpoint "${DIR}"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT code EQUAL 2 OR NOT err MATCHES "checkpoint.iteration: .*Fix: remove it")
    message(FATAL_ERROR "iteration.json '${value}' gave exit code ${code}, not 2 with the refusal: ${err}")
  endif()
endforeach()
# Written whole, it is taken: the run resumes at iteration 7 (its first line is step 8).
file(WRITE "${DIR}/iteration.json" "{\"iteration\": 7}")
execute_process(COMMAND "${TRAIN}" --ranks 2 --steps 1 --load-checkpoint "${DIR}" RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"step\":8")
  message(FATAL_ERROR "iteration.json {\"iteration\": 7} gave exit code ${code}, output: ${out}${err}")
endif()
