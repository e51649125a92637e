#pragma once
//! \file
//! The .fvecs format of the ANN benchmarks (TEXMEX): each vector is a
//! little-endian int32 dimension d, then d float32 values. Read as hostile
//! input: every vector must repeat the first one's dimension, the file must
//! end on a vector boundary, and every value must be finite; an error names the
//! vector and its byte offset.

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/detail/input_file.hpp>
#include <trinity/detail/output_file.hpp>
#include <trinity/error.hpp>

namespace trinity::cache {

//! Row-major vectors: rows × dimension floats.
struct embedding_matrix {
  std::size_t dimension = 0;
  std::vector<float> values;

  [[nodiscard]] std::size_t rows() const noexcept { return dimension ? values.size() / dimension : 0; }
  [[nodiscard]] std::span<const float> row(std::size_t r) const noexcept {
    return std::span<const float>(values).subspan(r * dimension, dimension);
  }
};

namespace detail {
inline std::uint32_t read_le32(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}
}  // namespace detail

//! Parses .fvecs bytes; `what` names the source in errors.
inline embedding_matrix parse_fvecs(std::span<const std::byte> bytes, const std::string& what = "fvecs") {
  embedding_matrix m;
  trinity::detail::require(!bytes.empty(), what, "is empty; expected vectors of (int32 d, d float32)");
  trinity::detail::require(bytes.size() >= 4, what, "is shorter than one dimension header (4 bytes)");
  const auto d = static_cast<std::int32_t>(detail::read_le32(bytes.data()));
  trinity::detail::require(d >= 1 && d <= 65536, what,
                           "vector 0 declares dimension " + std::to_string(d) + "; expected 1 to 65536");
  m.dimension = static_cast<std::size_t>(d);
  const std::size_t stride = 4 + 4 * m.dimension;
  trinity::detail::require(bytes.size() % stride == 0, what,
                           std::to_string(bytes.size()) + " bytes is not a whole number of " + std::to_string(stride) +
                               "-byte vectors of dimension " + std::to_string(d) + " (truncated, or mixed dimensions)");
  const std::size_t rows = bytes.size() / stride;
  m.values.resize(rows * m.dimension);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::byte* p = bytes.data() + r * stride;
    const auto dr = static_cast<std::int32_t>(detail::read_le32(p));
    trinity::detail::require(dr == d, what,
                             "vector " + std::to_string(r) + " (byte " + std::to_string(r * stride) +
                                 ") declares dimension " + std::to_string(dr) + ", not the first vector's " +
                                 std::to_string(d));
    for (std::size_t i = 0; i < m.dimension; ++i) {
      const std::uint32_t bits = detail::read_le32(p + 4 + 4 * i);
      const float v = std::bit_cast<float>(bits);
      trinity::detail::require(std::isfinite(v), what,
                               "vector " + std::to_string(r) + " value " + std::to_string(i) + " (byte " +
                                   std::to_string(r * stride + 4 + 4 * i) + ") is NaN or infinite");
      m.values[r * m.dimension + i] = v;
    }
  }
  return m;
}

inline embedding_matrix read_fvecs(const std::string& path) {
  const std::string raw = trinity::detail::read_input_file(path, trinity::detail::max_data_bytes);
  return parse_fvecs(std::as_bytes(std::span<const char>(raw)), path);
}

//! Writes the matrix as .fvecs, whole or not at all (detail/output_file.hpp); a failure throws invalid_input
//! naming `field` (the flag that named the file) and the path.
inline void write_fvecs(const std::string& path, const embedding_matrix& m, std::string_view field = "fvecs") {
  trinity::detail::output_file file{std::string(field), path};
  auto& out = file.stream();
  const auto d = static_cast<std::uint32_t>(m.dimension);
  for (std::size_t r = 0; r < m.rows(); ++r) {
    out.write(reinterpret_cast<const char*>(&d), 4);
    out.write(reinterpret_cast<const char*>(m.values.data() + r * m.dimension),
              static_cast<std::streamsize>(m.dimension * sizeof(float)));
  }
  file.commit();
}

}  // namespace trinity::cache
