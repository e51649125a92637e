#pragma once
//! \file
//! TradeoffPolicy: a choice that spends one resource to save another and can
//! price that trade for a given input. Every mechanism's cost model exposes
//! one, which is what lets the planner compare a codec with a cache.
//!
//!   struct my_policy {
//!     using policy_concept = trinity::tradeoff_policy_tag;
//!     using spends = trinity::resources::memory;
//!     using saves  = trinity::resources::compute;
//!     struct input { trinity::bytes capacity; double hit_rate; };
//!     trinity::priced_trade<spends, saves> price(const input&) const;
//!   };

#include <concepts>

#include <trinity/opt_in.hpp>
#include <trinity/concepts/resource.hpp>
#include <trinity/resources/priced_trade.hpp>

namespace trinity {

//! Says `using policy_concept = trinity::tradeoff_policy_tag;`.
template <class P>
concept opts_into_tradeoff_policy = requires {
  typename P::policy_concept;
}
&&std::same_as<typename P::policy_concept, tradeoff_policy_tag>;

//! Names what it spends and what it saves, both Resources.
template <class P>
concept declares_trade = requires {
  typename P::spends;
  typename P::saves;
}
&&Resource<typename P::spends>&& Resource<typename P::saves>;

//! Spends and saves different resources; otherwise it trades nothing.
template <class P>
concept trades_distinct_resources = declares_trade<P> && !std::same_as<typename P::spends, typename P::saves>;

//! Prices its trade for an input: `price(const input&) -> priced_trade<spends, saves>`.
template <class P>
concept prices_trade = declares_trade<P> && requires {
  typename P::input;
} && requires(const P& p, const typename P::input& in) {
  { p.price(in) } -> std::same_as<priced_trade<typename P::spends, typename P::saves>>;
};

template <class P>
concept TradeoffPolicy =
    opts_into_tradeoff_policy<P> && declares_trade<P> && trades_distinct_resources<P> && prices_trade<P>;

//! Fails to compile, with the fix in the message, unless P is a TradeoffPolicy.
template <class P>
consteval bool diagnose_tradeoff_policy() {
  static_assert(opts_into_tradeoff_policy<P>,
                "trinity: this type is not a TradeoffPolicy. Fix: add "
                "`using policy_concept = trinity::tradeoff_policy_tag;`.");
  if constexpr (opts_into_tradeoff_policy<P>) {
    static_assert(declares_trade<P>,
                  "trinity: a TradeoffPolicy names what it trades. Fix: add `using spends = trinity::resources::X;` "
                  "and `using saves = trinity::resources::Y;` (compute, bandwidth, memory, energy or time).");
    if constexpr (declares_trade<P>) {
      static_assert(trades_distinct_resources<P>,
                    "trinity: this policy spends and saves the same resource, so it trades nothing. Fix: make "
                    "`spends` and `saves` different resources.");
      static_assert(prices_trade<P>,
                    "trinity: a TradeoffPolicy prices its trade. Fix: add a nested `input` type and "
                    "`trinity::priced_trade<spends, saves> price(const input&) const`.");
    }
  }
  return TradeoffPolicy<P>;
}

}  // namespace trinity
