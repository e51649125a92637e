#pragma once
//! \file
//! What a generic algorithm tells its communicator besides moving bytes: that
//! it reduced so many bytes (the simulated fabric charges compute time for it).

#include <cstddef>
#include <span>
#include <type_traits>

namespace trinity::comm::detail {

template <class C>
void note_reduction(C& c, std::size_t bytes) {
  if constexpr (requires { c.account_reduction(bytes); }) c.account_reduction(bytes);
}

template <class T>
std::span<const std::byte> bytes_of(std::span<T> s) noexcept {
  return std::as_bytes(s);
}
template <class T>
requires(!std::is_const_v<T>) std::span<std::byte> writable_bytes_of(std::span<T> s)
noexcept { return std::as_writable_bytes(s); }

inline int wrap(int i, int n) noexcept { return ((i % n) + n) % n; }

}  // namespace trinity::comm::detail
