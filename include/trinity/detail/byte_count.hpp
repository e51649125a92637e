#pragma once
//! \file
//! bytes -> std::size_t for the calls that need a count (malloc, memcpy,
//! cudaMemcpy). A size is a double; a negative, fractional-overflowing or
//! non-finite one would make the cast undefined, so it is refused by name.

#include <cmath>
#include <cstddef>
#include <limits>

#include <trinity/error.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::detail {

inline std::size_t byte_count(bytes n) {
  const double v = n.value();
  require(std::isfinite(v) && v >= 0.0, "bytes", "must be a finite, non-negative size");
  require(v < static_cast<double>(std::numeric_limits<std::size_t>::max()), "bytes",
          "is larger than this machine can address");
  return static_cast<std::size_t>(v);
}

}  // namespace trinity::detail
