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
#     [DEPRECATED <file>...]            # forwarding headers left at a moved header's old path: installed, in a
#                                       # file set of their own that is not compiled alone (each warns)
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
                        "FOLDERS;HEADERS;PATTERNS;LINK;BUILD_INCLUDE_DIRS;SYSTEM_BUILD_INCLUDE_DIRS;DEPRECATED")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "trinity_add_component(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}. Fix: use "
                        "ENABLED, FOLDERS, HEADERS, PATTERNS, LINK, BUILD_INCLUDE_DIRS, SYSTEM_BUILD_INCLUDE_DIRS, "
                        "DEPRECATED or NO_VERIFY")
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
  trinity_deprecated_headers(deprecated ${arg_DEPRECATED})
  set_property(GLOBAL APPEND PROPERTY TRINITY_CLAIMED_HEADERS ${headers} ${deprecated})
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
  trinity_install_with_deprecated(trinity_${name} trinity-${name}-targets "${deprecated}")
  install(EXPORT trinity-${name}-targets NAMESPACE trinity:: DESTINATION "${TRINITY_CMAKE_DIR}")
  set_property(GLOBAL APPEND PROPERTY TRINITY_COMPONENTS ${name})
endfunction()

# The deprecated forwarding headers `files` (paths under include/trinity/) as paths from the source root, into
# `out`; each must exist.
function(trinity_deprecated_headers out)
  set(found "")
  foreach(header IN LISTS ARGN)
    if(NOT EXISTS "${PROJECT_SOURCE_DIR}/include/trinity/${header}")
      message(FATAL_ERROR "trinity: the deprecated header include/trinity/${header} does not exist")
    endif()
    list(APPEND found "include/trinity/${header}")
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Installs `target` into `export`, with its deprecated forwarding headers (`deprecated`, maybe empty) in a file set
# of their own, which VERIFY_INTERFACE_HEADER_SETS leaves out: each warns by design.
function(trinity_install_with_deprecated target export deprecated)
  set(sets FILE_SET HEADERS DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  if(deprecated)
    target_sources(${target} INTERFACE
      FILE_SET deprecated TYPE HEADERS BASE_DIRS "${PROJECT_SOURCE_DIR}/include" FILES ${deprecated})
    set_target_properties(${target} PROPERTIES INTERFACE_HEADER_SETS_TO_VERIFY HEADERS)
    list(APPEND sets FILE_SET deprecated DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  install(TARGETS ${target} EXPORT ${export} ${sets})
endfunction()

# trinity::trinity: every header under include/trinity that no component claimed, plus the generated version.hpp,
# and the forwarding headers DEPRECATED names. Call it after every trinity_add_component.
function(trinity_add_core)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "" "LINK;DEPRECATED")
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS RELATIVE "${PROJECT_SOURCE_DIR}" "${PROJECT_SOURCE_DIR}/include/trinity/*.hpp")
  trinity_deprecated_headers(deprecated ${arg_DEPRECATED})
  get_property(claimed GLOBAL PROPERTY TRINITY_CLAIMED_HEADERS)
  if(claimed OR deprecated)
    list(REMOVE_ITEM headers ${claimed} ${deprecated})
  endif()
  add_library(trinity INTERFACE)
  add_library(trinity::trinity ALIAS trinity)
  target_sources(trinity INTERFACE
    FILE_SET HEADERS
    BASE_DIRS "${PROJECT_SOURCE_DIR}/include" "${PROJECT_BINARY_DIR}/include"
    FILES ${headers} "${PROJECT_BINARY_DIR}/include/trinity/version.hpp")
  target_compile_features(trinity INTERFACE cxx_std_20)
  target_link_libraries(trinity INTERFACE ${arg_LINK})
  set_target_properties(trinity PROPERTIES EXPORT_NAME trinity)
  if(TRINITY_BUILD_TESTS AND TRINITY_VERIFY_HEADERS)
    set_target_properties(trinity PROPERTIES VERIFY_INTERFACE_HEADER_SETS ON)
  endif()
  trinity_install_with_deprecated(trinity trinity-targets "${deprecated}")
  install(EXPORT trinity-targets NAMESPACE trinity:: DESTINATION "${TRINITY_CMAKE_DIR}")
endfunction()
