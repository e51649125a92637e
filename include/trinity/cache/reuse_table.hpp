#pragma once
//! \file
//! How deep a hit may reuse: a similarity → reuse-depth table. A request whose
//! nearest cached prompt has similarity s starts from the latent stored after
//! depth(s) denoising steps and skips them; depth 0 is a miss. The default is
//! the paper's Table 1 (the paper §5.1.3, NIRVANA's settings): s > 0.95 → 25,
//! > 0.90 → 20, > 0.85 → 15, > 0.75 → 10,
//! > 0.65 → 5, else 0.
//!
//! Chosen at run time (`reuse_table` read from a file or flags) or at compile
//! time (`static_reuse<table>`, checked by the compiler):
//!
//!   constexpr auto mine = cache::make_reuse_table({{0.9, 20}, {0.8, 10}});
//!   cache::approximate_cache<cache::flat_index, cache::lru, cache::static_reuse<mine>> c(...);

#include <array>
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::cache {

//! similarity > above → depth.
struct reuse_rule {
  double above = 0;
  int depth = 0;
};

//! At most 16 rules, most similar first. A structural type, so it can be a template argument.
struct reuse_table {
  static constexpr std::size_t max_rules = 16;
  std::array<reuse_rule, max_rules> rules{};
  std::size_t count = 0;

  //! The depth a hit at similarity s reuses; 0 is a miss.
  [[nodiscard]] constexpr int depth(double s) const noexcept {
    for (std::size_t i = 0; i < count; ++i)
      if (s > rules[i].above) return rules[i].depth;
    return 0;
  }
  //! The largest depth any hit reuses (the first rule's).
  [[nodiscard]] constexpr int deepest() const noexcept { return count ? rules[0].depth : 0; }
  [[nodiscard]] constexpr std::span<const reuse_rule> view() const noexcept { return {rules.data(), count}; }
  //! Every depth a hit can reuse, shallowest first: the depths an entry stores latents at (5, 10, ... 25).
  [[nodiscard]] std::vector<int> depths() const {
    std::vector<int> d;
    for (std::size_t i = count; i-- > 0;) d.push_back(rules[i].depth);
    return d;
  }

  //! Thresholds in [-1, 1) and falling, depths positive and falling, 1 to 16 rules.
  [[nodiscard]] constexpr bool valid() const noexcept {
    if (count < 1 || count > max_rules) return false;
    for (std::size_t i = 0; i < count; ++i) {
      const auto& r = rules[i];
      if (!(r.above >= -1.0 && r.above < 1.0) || r.depth <= 0) return false;
      if (i > 0 && (r.above >= rules[i - 1].above || r.depth >= rules[i - 1].depth)) return false;
    }
    return true;
  }

  //! Throws invalid_input naming the first rule that breaks valid().
  void validate() const {
    trinity::detail::require(count >= 1 && count <= max_rules, "reuse_table", "needs from 1 to 16 rules");
    for (std::size_t i = 0; i < count; ++i) {
      const auto& r = rules[i];
      const std::string at = "reuse_table.rules[" + std::to_string(i) + "]";
      trinity::detail::require(r.above >= -1.0 && r.above < 1.0, at + ".above",
                               std::to_string(r.above) + " is outside [-1, 1), where similarities lie");
      trinity::detail::require(r.depth > 0, at + ".depth",
                               "must be a positive number of steps (below the last threshold is the miss)");
      if (i > 0) {
        trinity::detail::require(r.above < rules[i - 1].above, at + ".above",
                                 "thresholds must fall from rule to rule (most similar first)");
        trinity::detail::require(r.depth < rules[i - 1].depth, at + ".depth",
                                 "depths must fall as similarity falls: a less similar prompt reuses less");
      }
    }
  }

  friend constexpr bool operator==(const reuse_table&, const reuse_table&) = default;
};

//! A checked table from rules, most similar first.
constexpr reuse_table make_reuse_table(std::initializer_list<reuse_rule> rules) {
  reuse_table t;
  trinity::detail::require(rules.size() >= 1 && rules.size() <= reuse_table::max_rules, "reuse_table",
                           "needs from 1 to 16 rules");
  for (const auto& r : rules) t.rules[t.count++] = r;
  if (!t.valid()) t.validate();  // throws, naming the rule; in a constant expression that is a compile error
  return t;
}

//! The paper's Table 1 (§5.1.3).
inline constexpr reuse_table paper_table_1 =
    make_reuse_table({{0.95, 25}, {0.90, 20}, {0.85, 15}, {0.75, 10}, {0.65, 5}});

//! A table fixed at compile time: the cache reads it as a constant. An invalid table does not compile.
template <reuse_table Table>
struct static_reuse {
  static_assert(Table.valid(),
                "trinity::cache::static_reuse: the table is invalid. Fix: thresholds in [-1, 1) falling, depths "
                "positive and falling, most similar rule first.");
  static constexpr reuse_table table = Table;
  [[nodiscard]] static constexpr int depth(double s) noexcept { return Table.depth(s); }
  [[nodiscard]] static constexpr int deepest() noexcept { return Table.deepest(); }
  [[nodiscard]] static std::vector<int> depths() { return Table.depths(); }
};

//! A table chosen at run time (from flags or a file), checked when made.
class runtime_reuse {
 public:
  explicit runtime_reuse(reuse_table t = paper_table_1) : table_(t) { table_.validate(); }
  [[nodiscard]] int depth(double s) const noexcept { return table_.depth(s); }
  [[nodiscard]] int deepest() const noexcept { return table_.deepest(); }
  [[nodiscard]] std::vector<int> depths() const { return table_.depths(); }
  [[nodiscard]] const reuse_table& table() const noexcept { return table_; }

 private:
  reuse_table table_;
};

template <class R>
concept ReusePolicy = requires(const R& r, double s) {
  { r.depth(s) } -> std::same_as<int>;
  { r.deepest() } -> std::same_as<int>;
  { r.depths() } -> std::same_as<std::vector<int>>;
};

}  // namespace trinity::cache
