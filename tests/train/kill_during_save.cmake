# A save killed at any moment (cmake's TIMEOUT kills the process: during training, while pieces are written,
# while the manifest is, around the swap) leaves a checkpoint that loads: the previous one, or the new one whole,
# never a mixture and never none. Each round resumes the checkpoint and saves into the same directory, killed
# after a longer time than the round before.
#   cmake -DTRAIN=build/bin/trinity-train -DDIR=ckpt -P kill_during_save.cmake
file(REMOVE_RECURSE "${DIR}")
set(model --ranks 2 --width 1024 --layers 6)  # 63 MB of states: a save takes a while
execute_process(COMMAND "${TRAIN}" ${model} --steps 1 --save-checkpoint "${DIR}/ckpt" RESULT_VARIABLE code
                OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 120)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "the first save failed: ${code} ${err}")
endif()
set(iteration 1)
set(killed 0)
foreach(timeout 0.05 0.1 0.2 0.3 0.5 0.7 0.9 1.1 1.3 1.6 2 2.5 3 4)
  execute_process(COMMAND "${TRAIN}" ${model} --steps 1 --load-checkpoint "${DIR}/ckpt" --save-checkpoint "${DIR}/ckpt"
                  RESULT_VARIABLE code OUTPUT_QUIET ERROR_QUIET TIMEOUT ${timeout})
  if(NOT code EQUAL 0)
    math(EXPR killed "${killed} + 1")
  endif()
  # Whatever is there loads: at the iteration before this round's save, or after it.
  execute_process(COMMAND "${TRAIN}" ${model} --steps 1 --load-checkpoint "${DIR}/ckpt" RESULT_VARIABLE code
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  math(EXPR before "${iteration} + 1")
  math(EXPR after "${iteration} + 2")
  if(NOT code EQUAL 0 OR NOT out MATCHES "\"step\":(${before}|${after})[,}]")
    message(FATAL_ERROR "after a save killed at ${timeout} s the checkpoint did not load at step ${before} or ${after}: "
                        "${code} ${out}${err}")
  endif()
  if(out MATCHES "\"step\":${after}[,}]")
    set(iteration ${before})
  endif()
endforeach()
message(STATUS "${killed} of 14 saves killed; the checkpoint loaded after every one (last iteration ${iteration})")
if(killed EQUAL 0)
  message(FATAL_ERROR "no save was killed: the rounds did not test a kill (make the model larger)")
endif()
