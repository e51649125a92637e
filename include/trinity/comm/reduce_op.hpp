#pragma once
//! \file
//! The reductions a collective applies, element by element. Signed integer
//! sums wrap as two's complement, as MPI_SUM does on every platform trinity
//! runs on, rather than being undefined behaviour.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include <trinity/half.hpp>

namespace trinity::comm {

enum class reduce_op : std::uint8_t { sum, max, min };

constexpr std::string_view to_string(reduce_op op) noexcept {
  switch (op) {
    case reduce_op::sum:
      return "sum";
    case reduce_op::max:
      return "max";
    case reduce_op::min:
      return "min";
  }
  return "unknown";
}

//! The element types collectives reduce: every arithmetic type but bool, and trinity's 16-bit floats (summed
//! in float, each sum rounded to 16 bits).
template <class T>
concept reducible = (std::is_arithmetic_v<T> && !std::same_as<std::remove_cv_t<T>, bool>) || is_half_float<T>;

namespace detail {
// Blocks of a fixed width, read whole before written: GCC's -O2 cost model vectorizes only loops whose trip
// count it knows, and the copy through `block` keeps an out that aliases a or b correct.
template <class T, class F>
void elementwise(const T* a, const T* b, T* out, std::size_t n, F f) noexcept {
  constexpr std::size_t width = 64 / sizeof(T);
  std::size_t i = 0;
  for (; i + width <= n; i += width) {
    T block[width];
    for (std::size_t k = 0; k < width; ++k) block[k] = f(a[i + k], b[i + k]);
    for (std::size_t k = 0; k < width; ++k) out[i + k] = block[k];
  }
  for (; i < n; ++i) out[i] = f(a[i], b[i]);
}
}  // namespace detail

//! out[i] = a[i] op b[i]. out may be a or b (not a partial overlap): each element is read before it is written.
template <reducible T>
void combine(std::span<const T> a, std::span<const T> b, std::span<T> out, reduce_op op) noexcept {
  const std::size_t n = out.size();
  switch (op) {
    case reduce_op::sum:
      if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        using U = std::make_unsigned_t<T>;
        detail::elementwise(a.data(), b.data(), out.data(), n, [](T x, T y) {
          return static_cast<T>(static_cast<U>(static_cast<U>(x) + static_cast<U>(y)));
        });
      } else {
        detail::elementwise(a.data(), b.data(), out.data(), n, [](T x, T y) { return static_cast<T>(x + y); });
      }
      break;
    case reduce_op::max:
      detail::elementwise(a.data(), b.data(), out.data(), n, [](T x, T y) { return x < y ? y : x; });
      break;
    case reduce_op::min:
      detail::elementwise(a.data(), b.data(), out.data(), n, [](T x, T y) { return y < x ? y : x; });
      break;
  }
}

}  // namespace trinity::comm
