# A pipeline's checkpoint (trinity-train --pp 2 on 4 ranks: each stage's dense layers in a directory of their own)
# with one piece damaged, one piece (or, re-sliced, one tensor slice) from another run, or a folder its manifest
# does not name beside them is refused on resume, by the manifest rank 0 checks every piece against. Only the second stage's ranks read its piece, so the first stage's must stop too rather than wait in a
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
refused(foreign "checkpoint.pieces: [^\n]*${second}/rank-[01]-of-2\\.ckpt fails its manifest's checksum")

# Another layout's piece copied in beside them: a file its manifest does not name.
file(COPY "${DIR}/after-2/" DESTINATION "${DIR}/two-layouts")
file(COPY "${DIR}/after-2/${second}/rank-0-of-2.ckpt" DESTINATION "${DIR}/two-layouts")
file(RENAME "${DIR}/two-layouts/rank-0-of-2.ckpt" "${DIR}/two-layouts/rank-0-of-1.ckpt")
refused(two-layouts "checkpoint.pieces: [^\n]*two-layouts/rank-0-of-1\\.ckpt is not among the pieces its manifest names")

# A directory's name is input too: a folder the manifest does not name is refused before its name is read as a
# split (its counts would otherwise multiply: 2^32 x 2^32 wraps to 0 in 64 bits).
file(COPY "${DIR}/after-2/" DESTINATION "${DIR}/hostile")
file(MAKE_DIRECTORY "${DIR}/hostile/stage-0-of-4294967296x4294967296-slice-0-of-1")
refused(hostile "checkpoint.pieces: [^\n]*stage-0-of-4294967296x4294967296-slice-0-of-1/ is neither a piece nor a folder of pieces")
# Behind the manifest, the checks of what it names still stand: a manifest forged to name the hostile folder's
# file (trinity-train-check --reseal, as one who can write the directory could) reaches the split's counts, which
# are refused as what they are before they multiply (2^32 x 2^32 wraps to 0 in 64 bits, and the directory was
# taken for no split at all); pieces of two runs, listed as one, are refused by the steps they had taken.
if(CHECK)
  file(WRITE "${DIR}/hostile-resealed/stage-0-of-4294967296x4294967296-slice-0-of-1/rank-0-of-1.ckpt" "x")
  file(COPY "${DIR}/after-2/checkpoint.manifest" DESTINATION "${DIR}/hostile-resealed")
  execute_process(COMMAND "${CHECK}" --train "${TRAIN}" --reseal "${DIR}/hostile-resealed" RESULT_VARIABLE resealed
                  OUTPUT_QUIET)
  if(NOT resealed EQUAL 0)
    message(FATAL_ERROR "resealing the hostile checkpoint failed: ${resealed}")
  endif()
  refused(hostile-resealed "--layers: its 4294967296 pipeline ranks of 4294967296 chunks hold more chunks than layers")
  file(COPY "${DIR}/foreign/" DESTINATION "${DIR}/foreign-resealed")
  execute_process(COMMAND "${CHECK}" --train "${TRAIN}" --reseal "${DIR}/foreign-resealed" RESULT_VARIABLE resealed
                  OUTPUT_QUIET)
  refused(foreign-resealed "checkpoint: the pieces of .* had taken [23] steps where its manifest says 2|checkpoint: the model's layers were saved by runs that had taken")
endif()

# A checkpoint without its manifest (a save that never finished, or one from before manifests) is not trusted.
file(COPY "${DIR}/after-2/" DESTINATION "${DIR}/no-manifest")
file(REMOVE "${DIR}/no-manifest/checkpoint.manifest")
refused(no-manifest "checkpoint.manifest: [^\n]*no-manifest holds no checkpoint.manifest")

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
refused(foreign-slice "checkpoint.pieces: [^\n]*${slice}/rank-[0-9]+-of-[0-9]+\\.ckpt fails its manifest's checksum")

# Whole, the same directory resumes: its first line is step 3.
execute_process(COMMAND ${run} ${model} --steps 1 --load-checkpoint "${DIR}/after-2" RESULT_VARIABLE code
                OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT code EQUAL 0 OR NOT out MATCHES "\"step\":3")
  message(FATAL_ERROR "the whole checkpoint gave exit code ${code}, output: ${out}${err}")
endif()
