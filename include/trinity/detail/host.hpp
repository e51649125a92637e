#pragma once
//! \file
//! What machine this is, for measurements that name where they were taken:
//! the CPU's model name as Linux reports it.

#include <fstream>
#include <string>

namespace trinity::detail {

//! "AMD EPYC 9654 96-Core Processor", or "unknown" where /proc/cpuinfo does not say.
inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      const auto start = colon == std::string::npos ? colon : line.find_first_not_of(' ', colon + 1);
      if (start != std::string::npos) return line.substr(start);
    }
  return "unknown";
}

}  // namespace trinity::detail
