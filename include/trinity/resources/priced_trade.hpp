#pragma once
//! \file
//! priced_trade: one trade-off made explicit. It holds the cost of a unit of
//! work without the trade (`before`) and with it (`after`), names the resource
//! it spends and the one it saves, and prices the exchange:
//!
//!   cache 10 GB of latents -> spends memory 10 GB, saves compute 1.2e10 FLOP,
//!   rate() = 1.2 GFLOP per GB (the paper's "~1.7 GB yields ~2e9 FLOPs", §5.1.2).

#include <string_view>

#include <trinity/resources/resource_concept.hpp>
#include <trinity/resources/price_list.hpp>
#include <trinity/resources/resource.hpp>
#include <trinity/resources/resource_vector.hpp>

namespace trinity {

template <class Spends, class Saves>
struct priced_trade {
  static_assert(diagnose_resource<Spends>() && diagnose_resource<Saves>(),
                "priced_trade<Spends, Saves> names two Resources");
  using spends = Spends;
  using saves = Saves;

  resource_vector before;  //!< cost per unit of work without the trade
  resource_vector after;   //!< cost per unit of work with it

  //! How much more of the spent resource the trade uses.
  [[nodiscard]] constexpr typename Spends::quantity spent() const noexcept {
    return Spends::of(after) - Spends::of(before);
  }
  //! How much less of the saved resource it needs.
  [[nodiscard]] constexpr typename Saves::quantity saved() const noexcept {
    return Saves::of(before) - Saves::of(after);
  }
  //! Units saved per unit spent: FLOP per byte for memory -> compute.
  [[nodiscard]] constexpr auto rate() const noexcept { return saved() / spent(); }
  //! The same trade with the time and energy its work costs under p added to
  //! both sides, so time_saved() and energy_saved() say what it is worth there.
  [[nodiscard]] constexpr priced_trade priced(const price_list& p) const {
    return {trinity::priced(before, p), trinity::priced(after, p)};
  }
  //! Time per unit of work the trade saves (negative: it costs time).
  [[nodiscard]] constexpr seconds time_saved() const noexcept { return before.time - after.time; }
  //! Energy per unit of work the trade saves (negative: it costs energy).
  [[nodiscard]] constexpr joules energy_saved() const noexcept { return before.energy - after.energy; }
  //! A trade pays when it saves something for what it spends.
  [[nodiscard]] constexpr bool pays() const noexcept {
    return saved() > typename Saves::quantity{} && spent() >= typename Spends::quantity{};
  }
};

}  // namespace trinity
