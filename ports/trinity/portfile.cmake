# vcpkg overlay port for trinity (header-only). It builds the trinity checkout
# it lives in, so a user of this repository can run
#   vcpkg install trinity --overlay-ports=<trinity>/ports
# The version in vcpkg.json must equal project(trinity VERSION ...); a CTest
# test in this repository checks it.
get_filename_component(SOURCE_PATH "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)

# One feature per component target (vcpkg.json lists their dependencies).
vcpkg_check_features(OUT_FEATURE_OPTIONS feature_options
  FEATURES
    compress TRINITY_WITH_COMPRESS
    io TRINITY_WITH_IO
    mpi TRINITY_WITH_MPI
    numa TRINITY_WITH_NUMA
    hnsw TRINITY_WITH_HNSW
    stream TRINITY_WITH_STREAM)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    ${feature_options}
    -DTRINITY_BUILD_TESTS=OFF
    -DTRINITY_BUILD_TOOLS=OFF
    -DTRINITY_BUILD_EXAMPLES=OFF
    -DTRINITY_BUILD_BENCH=OFF
    -DTRINITY_WITH_CUDA=OFF)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME trinity CONFIG_PATH share/cmake/trinity)

# Header-only: nothing architecture-specific remains.
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug" "${CURRENT_PACKAGES_DIR}/lib")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
