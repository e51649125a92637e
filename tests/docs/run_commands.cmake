# Runs a page's shell blocks (extracted by cmake/doc_blocks.cmake) as a reader
# would, from a work directory that starts empty but for what the docs name:
# build/ (this build tree), docs/, scripts/ and bench/ (the sources). Benchmarks run in
# their quick mode (TRINITY_BENCH_QUICK: small sizes, their figures
# meaningless), so the suite checks that every documented command works, not
# how fast. bash -x prints each command as it runs; the first failure stops it.
# One command is not run: scripts/test.sh, this suite itself.
foreach(v SCRIPT SOURCE_DIR BUILD_DIR WORK_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_commands.cmake needs -D${v}=...")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
file(CREATE_LINK "${BUILD_DIR}" "${WORK_DIR}/build" SYMBOLIC)
file(CREATE_LINK "${SOURCE_DIR}/docs" "${WORK_DIR}/docs" SYMBOLIC)
file(CREATE_LINK "${SOURCE_DIR}/scripts" "${WORK_DIR}/scripts" SYMBOLIC)
file(CREATE_LINK "${SOURCE_DIR}/bench" "${WORK_DIR}/bench" SYMBOLIC)
set(ENV{TRINITY_BENCH_QUICK} 1)
# scripts/test.sh is the suite this test belongs to (.ci/run runs it): inside itself it would recurse.
file(READ "${SCRIPT}" commands)
string(REGEX REPLACE "(^|\n)scripts/test\\.sh[^\n]*" "\\1: scripts/test.sh is this test suite itself, run by .ci/run" commands "${commands}")
file(WRITE "${WORK_DIR}/commands.sh" "${commands}")
execute_process(COMMAND bash -euo pipefail -x "${WORK_DIR}/commands.sh" WORKING_DIRECTORY "${WORK_DIR}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  string(LENGTH "${out}" n)
  if(n GREATER 6000)
    math(EXPR from "${n} - 6000")
    string(SUBSTRING "${out}" ${from} -1 out)
  endif()
  message(FATAL_ERROR "a documented command failed (exit ${rc}); the last of what ran:\n${out}\n${err}")
endif()
message(STATUS "every command of ${SCRIPT} ran")
