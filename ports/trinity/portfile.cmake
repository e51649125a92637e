# vcpkg port for trinity (header-only). The version in vcpkg.json must equal
# project(trinity VERSION ...); a CTest test in the trinity repository checks it.
vcpkg_from_github(
  OUT_SOURCE_PATH SOURCE_PATH
  REPO trinity-hpc/trinity
  REF "v${VERSION}"
  SHA512 0
  HEAD_REF main)

vcpkg_cmake_configure(
  SOURCE_PATH "${SOURCE_PATH}"
  OPTIONS
    -DTRINITY_BUILD_TESTS=OFF
    -DTRINITY_BUILD_TOOLS=OFF
    -DTRINITY_BUILD_EXAMPLES=OFF
    -DTRINITY_BUILD_BENCH=OFF)
vcpkg_cmake_install()
vcpkg_cmake_config_fixup(PACKAGE_NAME trinity CONFIG_PATH share/cmake/trinity)

# Header-only: nothing architecture-specific remains.
file(REMOVE_RECURSE "${CURRENT_PACKAGES_DIR}/debug" "${CURRENT_PACKAGES_DIR}/lib")
file(INSTALL "${CMAKE_CURRENT_LIST_DIR}/usage" DESTINATION "${CURRENT_PACKAGES_DIR}/share/${PORT}")
vcpkg_install_copyright(FILE_LIST "${SOURCE_PATH}/LICENSE")
