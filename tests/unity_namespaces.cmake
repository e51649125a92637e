# Every runtime test file keeps its body (its helpers, its using-directives, its test cases) in a namespace named
# after its path under tests/runtime: plan/serving_test.cpp in plan_serving_test. The unity build
# (TRINITY_UNITY_BUILD) compiles up to 32 files as one translation unit, and a batch's members change whenever a
# file is added; without the namespace, one file's `n`, `fixture` or `using namespace trinity` reaches the files
# after it. Run with -DSOURCE_DIR=<checkout>.
file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}/tests/runtime" "${SOURCE_DIR}/tests/runtime/*.cpp")
list(LENGTH sources n)
if(n LESS 50)
  message(FATAL_ERROR "found only ${n} runtime test files under ${SOURCE_DIR}/tests/runtime; the check is broken")
endif()
set(wrong "")
foreach(source IN LISTS sources)
  string(REGEX REPLACE "\\.cpp$" "" ns "${source}")
  string(REPLACE "/" "_" ns "${ns}")
  file(READ "${SOURCE_DIR}/tests/runtime/${source}" text)
  string(FIND "${text}" "\nnamespace ${ns} {\n" open)
  string(FIND "${text}" "\n}  // namespace ${ns}\n" close REVERSE)
  string(LENGTH "${text}" length)
  math(EXPR tail "${length} - ${close}")
  # Nothing but the preprocessor and comments before the namespace opens, nothing after it closes.
  set(before "")
  if(open GREATER 0)
    string(SUBSTRING "${text}" 0 ${open} before)
    string(REGEX REPLACE "(^|\n)(#[^\n]*|//[^\n]*)" "\\1" before "${before}")
    string(STRIP "${before}" before)
  endif()
  string(LENGTH "\n}  // namespace ${ns}\n" closing)
  # Closed once: a second closing comment means code between them sits outside.
  string(REGEX MATCHALL "}  // namespace ${ns}\n" closings "${text}")
  list(LENGTH closings times_closed)
  if(open LESS 0 OR close LESS 0 OR NOT before STREQUAL "" OR NOT tail EQUAL closing OR NOT times_closed EQUAL 1)
    list(APPEND wrong "tests/runtime/${source} (namespace ${ns})")
  endif()
endforeach()
if(wrong)
  list(JOIN wrong "\n  " shown)
  message(FATAL_ERROR "these runtime test files do not keep their body in a namespace of their own; fix: open "
                      "`namespace <path_with_underscores> {` after the #includes and close it at the end of the file, "
                      "so a unity batch never shows one file's names to another:\n  ${shown}")
endif()
message(STATUS "${n} runtime test files each keep their body in a namespace of their own")
