# Every C++ source of the repository is as .clang-format lays it out (Google's style, 120 columns): the test
# runs clang-format over them and fails on the first file it would change. Run with -DSOURCE_DIR=<checkout>
# -DCLANG_FORMAT=<program>. Fix: clang-format -i FILE.
set(sources "")
foreach(folder include tools tests bench examples)
  file(GLOB_RECURSE found "${SOURCE_DIR}/${folder}/*.hpp" "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.cuh"
       "${SOURCE_DIR}/${folder}/*.cu")
  list(APPEND sources ${found})
endforeach()
list(LENGTH sources n)
if(n LESS 300)
  message(FATAL_ERROR "found only ${n} C++ sources under ${SOURCE_DIR}; the check is broken")
endif()
execute_process(COMMAND "${CLANG_FORMAT}" --style=file --dry-run -Werror ${sources}
                WORKING_DIRECTORY "${SOURCE_DIR}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  string(SUBSTRING "${err}" 0 2000 shown)
  message(FATAL_ERROR "clang-format would change these sources (fix: clang-format -i FILE):\n${shown}")
endif()
message(STATUS "${n} C++ sources are as .clang-format lays them out")
