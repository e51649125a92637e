// Writes each fuzz target's seeds as a libFuzzer corpus: <dir>/<target>/seed-N.
#include "seeds.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: trinity-fuzz-corpus <target> <dir>\n";
    return 2;
  }
  const std::filesystem::path dir = argv[2];
  std::filesystem::create_directories(dir);
  const auto seeds = trinity::fuzz::seed_inputs(argv[1]);
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    std::ofstream f(dir / ("seed-" + std::to_string(i)), std::ios::binary);
    f.write(reinterpret_cast<const char*>(seeds[i].data()), static_cast<std::streamsize>(seeds[i].size()));
    f.close();
    // A short write (a full disk) would start the fuzzer from truncated seeds without a word.
    TRINITY_FUZZ_REQUIRE(f && std::filesystem::file_size(dir / ("seed-" + std::to_string(i))) == seeds[i].size());
  }
  TRINITY_FUZZ_REQUIRE(!seeds.empty());  // else: an unknown target name
  std::cout << seeds.size() << " seeds in " << dir << '\n';
  return 0;
}
