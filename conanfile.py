# Conan 2 recipe for trinity, a header-only library. The version must equal
# project(trinity VERSION ...) in CMakeLists.txt; a CTest test checks it.
from conan import ConanFile
from conan.tools.build import check_min_cppstd
from conan.tools.cmake import CMake, CMakeToolchain, cmake_layout
from conan.tools.files import copy
import os


class TrinityConan(ConanFile):
    name = "trinity"
    version = "0.2.0"
    license = "Apache-2.0"
    description = "Computation-bandwidth-memory trade-offs for AI infrastructure, header-only C++20"
    topics = ("hpc", "ai-infrastructure", "cxl", "compression", "zero", "caching", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    # One option per component target; each brings its own dependencies. trinity::trinity is always there.
    options = {"with_compress": [True, False], "with_io": [True, False], "with_mpi": [True, False],
               "with_numa": [True, False], "with_hnsw": [True, False],
               "with_stream": [True, False]}
    default_options = {"with_compress": True, "with_io": True, "with_mpi": False, "with_numa": False,
                       "with_hnsw": False, "with_stream": False}
    exports_sources = "CMakeLists.txt", "cmake/*", "include/*", "LICENSE"
    no_copy_source = True

    def requirements(self):
        self.requires("range-v3/0.12.0")
        self.requires("boost/1.83.0", options={"header_only": True})
        self.requires("xxhash/0.8.2")  # the frames' hashes, in trinity::trinity
        if self.options.with_compress:
            self.requires("zstd/1.5.5")
            self.requires("lz4/1.9.4")
        if self.options.with_io:
            self.requires("nlohmann_json/3.11.3")
        if self.options.with_mpi:
            self.requires("openmpi/4.1.6")
        if self.options.with_hnsw:
            self.requires("hnswlib/0.8.0")
        if self.options.with_stream:
            self.requires("cppzmq/4.10.0")

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
        tc.cache_variables["TRINITY_WITH_COMPRESS"] = bool(self.options.with_compress)
        tc.cache_variables["TRINITY_WITH_IO"] = bool(self.options.with_io)
        tc.cache_variables["TRINITY_WITH_MPI"] = bool(self.options.with_mpi)
        tc.cache_variables["TRINITY_WITH_NUMA"] = bool(self.options.with_numa)
        tc.cache_variables["TRINITY_WITH_HNSW"] = bool(self.options.with_hnsw)
        tc.cache_variables["TRINITY_WITH_STREAM"] = bool(self.options.with_stream)
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
        self.cpp_info.bindirs = []
        self.cpp_info.libdirs = []
        # The component targets, as trinity's own CMake config declares them (tests/package checks the names).
        core = self.cpp_info.components["trinity"]
        core.set_property("cmake_target_name", "trinity::trinity")
        core.bindirs, core.libdirs = [], []
        core.requires = ["range-v3::range-v3", "boost::headers", "xxhash::xxhash"]

        def component(name, requires, system_libs=()):
            c = self.cpp_info.components[name]
            c.set_property("cmake_target_name", "trinity::" + name)
            c.bindirs, c.libdirs = [], []
            c.requires = ["trinity"] + list(requires)
            c.system_libs = list(system_libs)

        if self.options.with_compress:
            component("compress", ["zstd::zstd", "lz4::lz4"])
        if self.options.with_io:
            component("io", ["nlohmann_json::nlohmann_json"])
        if self.options.with_mpi:
            component("mpi", ["openmpi::openmpi"])
        if self.options.with_numa:
            component("numa", [], system_libs=["numa"])  # libnuma from the system: no Conan Center recipe
        if self.options.with_hnsw:
            component("hnsw", ["hnswlib::hnswlib"])
        if self.options.with_stream:
            component("stream", ["cppzmq::cppzmq"], system_libs=["pthread"])
