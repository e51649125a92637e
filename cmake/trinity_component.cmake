# trinity_add_component: one component of the header-only library, made from its folders.
#
#   trinity_add_component(<name>
#     [ENABLED <bool>]                  # build the target (its dependencies were found); default ON
#     FOLDERS <dir>...                  # under include/trinity/: every header in them, recursively
#     [HEADERS <file>...]               # single headers under include/trinity/ (the component's umbrella)
#     [PATTERNS <glob>...]              # file patterns in the folders; default *.hpp
#     [LINK <target>...]                # what its headers need, beside trinity::trinity
#     [BUILD_INCLUDE_DIRS <dir>...]     # include paths of the build tree only (a dependency without a target)
#     [SYSTEM_BUILD_INCLUDE_DIRS <dir>...]
#     [NO_VERIFY])                      # headers a C++ compiler cannot check alone (CUDA's .cuh)
#
# The component's headers are claimed whether or not it is ENABLED, so that trinity::trinity, made last by
# trinity_add_core, holds every header no component claimed and never one that needs a dependency of its own.
# An enabled component is the INTERFACE target trinity_<name>, aliased trinity::<name>, exported as
# trinity-<name>-targets (which trinity-config.cmake loads when asked for COMPONENTS <name>), and its headers
# are each compiled alone in a build with tests (VERIFY_INTERFACE_HEADER_SETS). mp-units makes its modules the
# same way (add_mp_units_module).

set_property(GLOBAL PROPERTY TRINITY_CLAIMED_HEADERS "")
set_property(GLOBAL PROPERTY TRINITY_COMPONENTS "")

function(trinity_add_component name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "NO_VERIFY" "ENABLED"
                        "FOLDERS;HEADERS;PATTERNS;LINK;BUILD_INCLUDE_DIRS;SYSTEM_BUILD_INCLUDE_DIRS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "trinity_add_component(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}. Fix: use "
                        "ENABLED, FOLDERS, HEADERS, PATTERNS, LINK, BUILD_INCLUDE_DIRS, SYSTEM_BUILD_INCLUDE_DIRS or NO_VERIFY")
  endif()
  if(NOT DEFINED arg_ENABLED)
    set(arg_ENABLED ON)
  endif()
  if(NOT arg_PATTERNS)
    set(arg_PATTERNS "*.hpp")
  endif()
  set(root "${PROJECT_SOURCE_DIR}/include/trinity")
  set(headers "")
  foreach(folder IN LISTS arg_FOLDERS)
    if(NOT IS_DIRECTORY "${root}/${folder}")
      message(FATAL_ERROR "trinity_add_component(${name}): include/trinity/${folder} is not a folder")
    endif()
    foreach(pattern IN LISTS arg_PATTERNS)
      file(GLOB_RECURSE found CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}" "${root}/${folder}/${pattern}")
      list(APPEND headers ${found})
    endforeach()
  endforeach()
  foreach(header IN LISTS arg_HEADERS)
    if(NOT EXISTS "${root}/${header}")
      message(FATAL_ERROR "trinity_add_component(${name}): include/trinity/${header} does not exist")
    endif()
    list(APPEND headers "include/trinity/${header}")
  endforeach()
  list(SORT headers)
  set_property(GLOBAL APPEND PROPERTY TRINITY_CLAIMED_HEADERS ${headers})
  if(NOT arg_ENABLED)
    return()
  endif()

  add_library(trinity_${name} INTERFACE)
  add_library(trinity::${name} ALIAS trinity_${name})
  target_sources(trinity_${name} INTERFACE
    FILE_SET HEADERS BASE_DIRS "${PROJECT_SOURCE_DIR}/include" FILES ${headers})
  foreach(dir IN LISTS arg_BUILD_INCLUDE_DIRS)
    target_include_directories(trinity_${name} INTERFACE "$<BUILD_INTERFACE:${dir}>")
  endforeach()
  foreach(dir IN LISTS arg_SYSTEM_BUILD_INCLUDE_DIRS)
    target_include_directories(trinity_${name} SYSTEM INTERFACE "$<BUILD_INTERFACE:${dir}>")
  endforeach()
  target_link_libraries(trinity_${name} INTERFACE trinity::trinity ${arg_LINK})
  set_target_properties(trinity_${name} PROPERTIES EXPORT_NAME ${name})
  if(TRINITY_BUILD_TESTS AND TRINITY_VERIFY_HEADERS AND NOT arg_NO_VERIFY)
    set_target_properties(trinity_${name} PROPERTIES VERIFY_INTERFACE_HEADER_SETS ON)
  endif()
  install(TARGETS trinity_${name} EXPORT trinity-${name}-targets
          FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT trinity-${name}-targets NAMESPACE trinity:: DESTINATION "${TRINITY_CMAKE_DIR}")
  set_property(GLOBAL APPEND PROPERTY TRINITY_COMPONENTS ${name})
endfunction()

# trinity::trinity: every header under include/trinity that no component claimed, plus the generated version.hpp.
# Call it after every trinity_add_component.
function(trinity_add_core)
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/include/trinity/*.hpp")
  get_property(claimed GLOBAL PROPERTY TRINITY_CLAIMED_HEADERS)
  if(claimed)
    list(REMOVE_ITEM headers ${claimed})
  endif()
  add_library(trinity INTERFACE)
  add_library(trinity::trinity ALIAS trinity)
  target_sources(trinity INTERFACE
    FILE_SET HEADERS
    BASE_DIRS "${PROJECT_SOURCE_DIR}/include" "${PROJECT_BINARY_DIR}/include"
    FILES ${headers} "${PROJECT_BINARY_DIR}/include/trinity/version.hpp")
  target_compile_features(trinity INTERFACE cxx_std_20)
  target_link_libraries(trinity INTERFACE ${ARGN})
  set_target_properties(trinity PROPERTIES EXPORT_NAME trinity)
  if(TRINITY_BUILD_TESTS AND TRINITY_VERIFY_HEADERS)
    set_target_properties(trinity PROPERTIES VERIFY_INTERFACE_HEADER_SETS ON)
  endif()
  install(TARGETS trinity EXPORT trinity-targets FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  install(EXPORT trinity-targets NAMESPACE trinity:: DESTINATION "${TRINITY_CMAKE_DIR}")
endfunction()
