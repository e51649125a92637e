#pragma once
//! \file
//! "Did you mean ...?": the valid name nearest to a misspelt one, by edit
//! distance, for errors that refuse an unknown key, preset or flag value.

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trinity::detail {

//! Levenshtein distance with adjacent transpositions counted as one edit ("capcaity" is one from "capacity").
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) prev[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    prev2.swap(prev);
    prev.swap(cur);
  }
  return prev[m];
}

//! The candidate nearest to `name`, if one is near enough to be a slip of the keyboard: at most a third
//! of its letters (and at least one) differ, or `name` is the start of exactly one candidate.
inline std::optional<std::string_view> nearest_name(std::string_view name,
                                                    std::span<const std::string_view> candidates) {
  std::optional<std::string_view> best;
  std::size_t best_distance = 0;
  for (const auto c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (!best) return std::nullopt;
  const std::size_t allowed = std::max<std::size_t>(1, std::max(name.size(), best->size()) / 3);
  if (best_distance <= allowed) return best;
  // A name cut short ("size" for "size_bytes", "rdma" for "rdma-400g"), when only one candidate continues it.
  std::optional<std::string_view> longer;
  for (const auto c : candidates)
    if (name.size() >= 3 && c.size() > name.size() && c.substr(0, name.size()) == name) {
      if (longer) return std::nullopt;
      longer = c;
    }
  return longer;
}

//! "; did you mean "capacity"?" or "; expected one of name, capacity, ...".
inline std::string suggestion(std::string_view name, std::span<const std::string_view> candidates) {
  if (const auto near = nearest_name(name, candidates)) return "; did you mean \"" + std::string(*near) + "\"?";
  std::string all;
  for (const auto c : candidates) all += (all.empty() ? "" : ", ") + std::string(c);
  return "; expected one of " + all;
}

}  // namespace trinity::detail
