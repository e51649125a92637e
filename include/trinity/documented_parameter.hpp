#pragma once
//! \file
//! documented_parameter: a figure the design documents do not give, with its
//! value in base units and its source, so programs can list it
//! (`trinity presets`) and tests can hold every figure to a source.

#include <string_view>

namespace trinity {

struct documented_parameter {
  enum class kind { latency, bandwidth, energy_per_byte };
  std::string_view name;
  kind what;
  double value;  //!< seconds, bytes per second, or joules per byte
  std::string_view source;
};

}  // namespace trinity
