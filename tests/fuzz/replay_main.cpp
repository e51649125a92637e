// The fuzz targets without libFuzzer: for the test suite, built by the
// project's own compiler (and under its sanitizers), each target runs for a
// few seconds on valid frames from the seed generator, mutated at random,
// and on random bytes. scripts/fuzz.sh runs the real, coverage-guided search.
//
//   trinity-fuzz-<target> [seconds=2] [seed=1]
//
// The target's name comes from the program's name, so one compiled driver
// serves every target.

#include <chrono>
#include <filesystem>
#include <string>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <vector>

#include "seeds.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 2.0;
  std::mt19937_64 rng(argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1);
  std::string name = std::filesystem::path(argv[0]).filename().string();
  if (name.rfind("trinity-fuzz-", 0) == 0) name = name.substr(13);
  const auto seeds = trinity::fuzz::seed_inputs(name);
  // A target without seeds would test random bytes only, which never pass a header: a misnamed target.
  TRINITY_FUZZ_REQUIRE(seeds.size() >= 3);  // else: is the program named trinity-fuzz-<target>?
  for (const auto& s : seeds) LLVMFuzzerTestOneInput(s.data(), s.size());
  const auto stop = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::size_t runs = seeds.size();
  std::vector<std::uint8_t> buf;
  while (std::chrono::steady_clock::now() < stop) {
    if (!seeds.empty() && rng() % 4 != 0) {
      buf = seeds[rng() % seeds.size()];
      const std::size_t flips = 1 + rng() % 8;
      for (std::size_t i = 0; i < flips && !buf.empty(); ++i) {
        switch (rng() % 4) {
          case 0:
            buf[rng() % buf.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
            break;
          case 1:
            buf[rng() % buf.size()] = static_cast<std::uint8_t>(rng());
            break;
          case 2:
            buf.resize(rng() % (buf.size() + 1));
            break;
          default:
            buf.insert(buf.begin() + static_cast<std::ptrdiff_t>(rng() % (buf.size() + 1)),
                       static_cast<std::uint8_t>(rng()));
        }
      }
    } else {
      buf.resize(rng() % 512);
      for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
    }
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
    ++runs;
  }
  std::cout << name << ": " << seeds.size() << " seeds,"
            << " " << runs << " inputs without a finding\n";
  return 0;
}
