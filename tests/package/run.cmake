# The package as a user gets it: configure a fresh tree of the sources with the
# defaults and install it WITHOUT building anything (a header-only library needs
# no build), then configure the consumer project against the install with
# find_package(trinity CONFIG REQUIRED COMPONENTS ...), build and run it. Then
# a component the install lacks, and one trinity does not have, must each stop
# a consumer's configuration with a message that names it.
foreach(v SOURCE_DIR CONSUMER_DIR WORK_DIR CXX)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run.cmake needs -D${v}=...")
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

# Must fail, with `expect` in what it prints.
function(refused expect)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REPLACE "\n" " " all "${out}${err}")
  string(REGEX REPLACE " +" " " all "${all}")
  if(rc EQUAL 0 OR NOT all MATCHES "${expect}")
    message(FATAL_ERROR "expected a failure matching '${expect}' (exit ${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "refused as expected: ${expect}")
endfunction()

run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}/fresh" -G Ninja "-DCMAKE_CXX_COMPILER=${CXX}")
run("${CMAKE_COMMAND}" --install "${WORK_DIR}/fresh" --prefix "${prefix}")
foreach(f share/cmake/trinity/trinity-config.cmake include/trinity/trinity.hpp include/trinity/version.hpp
          include/trinity/io.hpp)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "install did not produce ${f}")
  endif()
endforeach()
if(EXISTS "${WORK_DIR}/fresh/bin/trinity")
  message(FATAL_ERROR "the fresh tree was built; this test installs one that never was")
endif()

run("${CMAKE_COMMAND}" -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build" -G Ninja
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX}" -DCMAKE_BUILD_TYPE=Release)
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/build")
foreach(program consumer compress_consumer io_consumer mpi_consumer hnsw_consumer hnswlib_first_consumer hnswlib_after_consumer
                stream_consumer adoption_consumer)
  run("${WORK_DIR}/build/${program}")
endforeach()

# A program written against 0.1's names: it builds, with no warning but the deprecations that name each
# replacement (one for each of its old names), and runs.
run("${CMAKE_COMMAND}" -S "${CONSUMER_DIR}/legacy" -B "${WORK_DIR}/legacy" -G Ninja
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX}" -DCMAKE_BUILD_TYPE=Release)
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/legacy" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the consumer written against 0.1's names does not build (${rc}):\n${out}\n${err}")
endif()
string(REGEX MATCHALL "[^\n]*warning:[^\n]*" warnings "${out}${err}")
foreach(warning IN LISTS warnings)
  if(NOT warning MATCHES "deprecated")
    message(FATAL_ERROR "the consumer written against 0.1's names warns of more than deprecations: ${warning}")
  endif()
endforeach()
foreach(name "cache/hnsw_index.hpp> is deprecated" "compress/zstd.hpp> is deprecated"
             "concepts/tier.hpp> is deprecated" "tier_spec.* is deprecated" "link_spec.* is deprecated"
             "from.* is deprecated: use plan::tier_of" "read_workload.* is deprecated" "layout_problem.* is deprecated")
  if(NOT "${out}${err}" MATCHES "${name}")
    message(FATAL_ERROR "the consumer written against 0.1's names was not told '${name}':\n${out}\n${err}")
  endif()
endforeach()
run("${WORK_DIR}/legacy/legacy_consumer")

refused("compres: not a component of trinity; the components are compress, io, mpi, numa, hnsw, stream, cuda"
  "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}/unknown_component" -B "${WORK_DIR}/unknown" -G Ninja
  "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX}")
# An install without the NUMA backend, as -DTRINITY_WITH_NUMA=OFF leaves it.
file(REMOVE "${prefix}/share/cmake/trinity/trinity-numa-targets.cmake")
refused("a required component cannot be loaded: numa: not installed"
  "${CMAKE_COMMAND}" -S "${CONSUMER_DIR}/missing_component" -B "${WORK_DIR}/missing" -G Ninja
  "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX}")
