# Conan 2 recipe for trinity, a header-only library. The version must equal
# project(trinity VERSION ...) in CMakeLists.txt; a CTest test checks it.
from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy
import os


class TrinityConan(ConanFile):
    name = "trinity"
    version = "0.1.0"
    license = "Apache-2.0"
    description = "Computation-bandwidth-memory trade-offs for AI infrastructure, header-only C++20"
    topics = ("hpc", "ai-infrastructure", "cxl", "compression", "zero", "caching", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    exports_sources = "CMakeLists.txt", "cmake/*", "include/*", "LICENSE"
    no_copy_source = True

    def requirements(self):
        self.requires("range-v3/0.12.0")
        self.requires("boost/1.83.0", options={"header_only": True})

    def validate(self):
        check_min_cppstd(self, 20)

    def layout(self):
        cmake_layout(self)

    def generate(self):
        tc = CMakeToolchain(self)
        tc.cache_variables["TRINITY_BUILD_TESTS"] = False
        tc.cache_variables["TRINITY_BUILD_TOOLS"] = False
        tc.cache_variables["TRINITY_BUILD_EXAMPLES"] = False
        tc.cache_variables["TRINITY_BUILD_BENCH"] = False
        tc.cache_variables["TRINITY_WITH_CUDA"] = False
        tc.generate()

    def build(self):
        # Configuring generates include/trinity/version.hpp.
        cmake = CMake(self)
        cmake.configure()

    def package(self):
        cmake = CMake(self)
        cmake.install()
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))

    def package_id(self):
        self.info.clear()

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "trinity")
        self.cpp_info.set_property("cmake_target_name", "trinity::trinity")
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        self.cpp_info.requires = ["range-v3::range-v3", "boost::headers"]
