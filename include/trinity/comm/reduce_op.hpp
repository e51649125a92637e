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

namespace trinity::comm {

enum class reduce_op : std::uint8_t { sum, max, min };

constexpr std::string_view to_string(reduce_op op) noexcept {
  switch (op) {
    case reduce_op::sum: return "sum";
    case reduce_op::max: return "max";
    case reduce_op::min: return "min";
  }
  return "unknown";
}

//! The element types collectives reduce: every arithmetic type but bool.
template <class T>
concept reducible = std::is_arithmetic_v<T> && !std::same_as<std::remove_cv_t<T>, bool>;

//! out[i] = a[i] op b[i]. out may alias a or b: each element is read before it is written.
template <reducible T>
void combine(std::span<const T> a, std::span<const T> b, std::span<T> out, reduce_op op) noexcept {
  const std::size_t n = out.size();
  const T* __restrict pa = a.data();
  const T* __restrict pb = b.data();
  T* po = out.data();
  switch (op) {
    case reduce_op::sum:
      if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
        using U = std::make_unsigned_t<T>;
        for (std::size_t i = 0; i < n; ++i)
          po[i] = static_cast<T>(static_cast<U>(static_cast<U>(pa[i]) + static_cast<U>(pb[i])));
      } else {
        for (std::size_t i = 0; i < n; ++i) po[i] = static_cast<T>(pa[i] + pb[i]);
      }
      break;
    case reduce_op::max:
      for (std::size_t i = 0; i < n; ++i) po[i] = std::max(pa[i], pb[i]);
      break;
    case reduce_op::min:
      for (std::size_t i = 0; i < n; ++i) po[i] = std::min(pa[i], pb[i]);
      break;
  }
}

}  // namespace trinity::comm
