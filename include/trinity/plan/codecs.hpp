#pragma once
//! \file
//! Gradient codecs the planner may choose from when no calibrated profile is
//! given: the figures measured by trinity-bench-compress on the 2-core CI
//! machine (docs/compression.md, "Speed"), with decode taken as fast as encode
//! where only encode was measured. `trinity calibrate --out profile.json`
//! measures the machine at hand instead, and `trinity plan --profile` reads it.

#include <vector>

#include <trinity/model/compression.hpp>

namespace trinity::plan {

//! "identity" is the gradient as the trainer holds it; every other ratio is against fp32.
inline std::vector<model::compressor_cost> default_codecs() {
  const auto rate = [](double gbps) { return bytes_per_second{gbps * 1e9}; };
  return {
      {"identity", 1.0, rate(1e3), rate(1e3), 0.0, true},
      {"bf16", 2.0, rate(12.4), rate(12.4), 0.0017, false},
      {"int8-ef", 3.88, rate(23.1), rate(23.1), 0.0065, false},
      {"sign-ef", 28.4, rate(38.0), rate(38.0), 0.60, false},
      {"sampled-topk-1%-ef", 50.0, rate(7.2), rate(7.2), 0.96, false, true},
      {"powersgd-4", 512.0, rate(1.7), rate(1.7), 0.999, false, true},
  };
}

}  // namespace trinity::plan
