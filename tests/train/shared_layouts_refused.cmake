# A checkpoint directory holding the shared experts of two tensor-parallel layouts (a slice saved at --tp 2, and
# another run's at --tp 1 copied in beside it) is refused by name, with the fix, before either is loaded: the
# copied slice is not among the pieces the checkpoint's manifest names.
#   cmake -DTRAIN=build/bin/trinity-train -DDIR=ckpt -P shared_layouts_refused.cmake
set(model --width 64 --layers 3 --batch 48 --experts 4 --top-k 2 --shared-experts 2)
file(REMOVE_RECURSE "${DIR}")
execute_process(COMMAND "${TRAIN}" --ranks 4 --tp 2 --sp --ep 2 --steps 1 --save-checkpoint "${DIR}" ${model}
                RESULT_VARIABLE code OUTPUT_QUIET ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 0 OR NOT IS_DIRECTORY "${DIR}/shared-experts-slice-0-of-2")
  message(FATAL_ERROR "the checkpoint at --tp 2 was not written: exit code ${code}: ${err}")
endif()
# The second layout's slice, as a run at --tp 1 would have written it into the same directory.
file(COPY "${DIR}/shared-experts-slice-0-of-2/" DESTINATION "${DIR}/shared-experts-slice-0-of-1")
execute_process(COMMAND "${TRAIN}" --ranks 2 --ep 2 --steps 1 --load-checkpoint "${DIR}" ${model}
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
set(regex "checkpoint.pieces: [^\n]*shared-experts-slice-0-of-1/[^\n]* is not among the pieces its manifest names[^\n]*Fix: remove it")
if(NOT code EQUAL 2 OR NOT err MATCHES "${regex}")
  message(FATAL_ERROR "two layouts' shared experts were not refused: exit code ${code}: ${err}")
endif()
if(out MATCHES "\"loss\"")
  message(FATAL_ERROR "a step ran from a checkpoint of two layouts: ${out}")
endif()
