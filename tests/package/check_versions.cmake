# The version lives once, in project(trinity VERSION ...); the Conan recipe and
# the vcpkg port must say the same.
foreach(v VERSION SOURCE_DIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_versions.cmake needs -D${v}=...")
  endif()
endforeach()

file(READ "${SOURCE_DIR}/conanfile.py" conan)
if(NOT conan MATCHES "version = \"([^\"]+)\"")
  message(FATAL_ERROR "conanfile.py has no 'version = \"x.y.z\"' line")
endif()
set(conan_version "${CMAKE_MATCH_1}")

file(READ "${SOURCE_DIR}/ports/trinity/vcpkg.json" port)
string(JSON port_version GET "${port}" version)

foreach(pair "conanfile.py:${conan_version}" "ports/trinity/vcpkg.json:${port_version}")
  string(REPLACE ":" ";" parts "${pair}")
  list(GET parts 0 file)
  list(GET parts 1 found)
  if(NOT found STREQUAL VERSION)
    message(FATAL_ERROR "${file} says ${found}, CMakeLists.txt says ${VERSION}: update ${file}")
  endif()
endforeach()
message(STATUS "conanfile.py, vcpkg.json and CMake all say ${VERSION}")
