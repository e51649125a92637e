#pragma once
//! \file
//! The numbers in a checkpoint directory's name (stage-0-of-4x2-slice-0-of-2, experts-0-of-4-slice-0-of-1): read
//! as hostile input, since a directory may be anyone's.

#include <charconv>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

namespace trinity::train::detail {

// The whole numbers of a directory name that is `parts[0]`, a number, `parts[1]`, a number, ... (no sign, no
// leading zero, nothing after the last), or nothing where it is not one.
inline std::optional<std::vector<std::size_t>> numbers_in(std::string_view name,
                                                          std::initializer_list<std::string_view> parts) {
  std::vector<std::size_t> out;
  const char* at = name.data();
  const char* const end = name.data() + name.size();
  for (const auto part : parts) {
    if (!std::string_view(at, static_cast<std::size_t>(end - at)).starts_with(part)) return std::nullopt;
    at += part.size();
    std::size_t n = 0;
    const auto [next, bad] = std::from_chars(at, end, n);
    if (bad != std::errc{} || n == 0 || *at == '0') return std::nullopt;  // no sign, no leading zero
    out.push_back(n);
    at = next;
  }
  if (at != end) return std::nullopt;
  return out;
}

}  // namespace trinity::train::detail
