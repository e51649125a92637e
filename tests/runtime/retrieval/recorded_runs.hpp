#pragma once
// A recorded bench file (bench/results/NAME), its runs by name without the "/real_time" Google Benchmark adds,
// and the build it was recorded on: what the "recorded run" tests hold their claims on.
#include <map>
#include <string>

#include <trinity/io/json_object.hpp>

namespace trinity::test {

struct recorded_runs {
  io::json file;
  std::map<std::string, const io::json*> by;

  explicit recorded_runs(const std::string& name)
      : file(io::load(std::string(TRINITY_SOURCE_DIR) + "/bench/results/" + name)) {
    for (const auto& b : file.at("benchmarks")) by[b.at("name").get<std::string>()] = &b;
  }
  //! A counter of run `run` (e.g. "ivf/pq/4").
  [[nodiscard]] double operator()(const std::string& run, const std::string& counter) const {
    return by.at(run + "/real_time")->at(counter).get<double>();
  }
  [[nodiscard]] bool has(const std::string& run, const std::string& counter) const {
    return by.at(run + "/real_time")->contains(counter);
  }
  //! Whether it was recorded on the default ci build, the flags a user's build starts from.
  [[nodiscard]] bool on_ci_build() const {
    return file.at("context").at("trinity_build").get<std::string>().rfind("preset ci", 0) == 0;
  }
};

}  // namespace trinity::test
