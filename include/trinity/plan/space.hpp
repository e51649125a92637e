#pragma once
//! \file
//! The candidate space of a training plan, one slot per trade, composed at
//! compile time:
//!   zero_stages<S...>        which ZeRO stages to consider (bandwidth → memory)
//!   offload_choices<O...>    whether optimizer states may go to a slower tier (bandwidth → memory)
//!   recompute_choices<R...>  whether activations may be recomputed instead of stored (compute → memory)
//! and gradient codecs (compute → bandwidth), which are data: costs measured by
//! `trinity calibrate` or the defaults in plan/codecs.hpp.
//!
//!   using space = plan::training_space<plan::zero_stages<0, 3>, plan::offload_choices<false>>;

#include <array>
#include <cstddef>

namespace trinity::plan {

template <int... S>
struct zero_stages {
  static_assert(sizeof...(S) > 0, "trinity::plan::zero_stages: name at least one stage. Fix: zero_stages<0, 1, 2, 3>.");
  static_assert(((S >= 0 && S <= 3) && ...),
                "trinity::plan::zero_stages: ZeRO has stages 0 (DDP) to 3. Fix: use 0, 1, 2 or 3.");
  static constexpr std::array<int, sizeof...(S)> values{S...};
};

template <bool... O>
struct offload_choices {
  static_assert(sizeof...(O) > 0,
                "trinity::plan::offload_choices: name at least one. Fix: offload_choices<false, true>.");
  static constexpr std::array<bool, sizeof...(O)> values{O...};
};

template <bool... R>
struct recompute_choices {
  static_assert(sizeof...(R) > 0,
                "trinity::plan::recompute_choices: name at least one. Fix: recompute_choices<false, true>.");
  static constexpr std::array<bool, sizeof...(R)> values{R...};
};

template <class T>
inline constexpr bool is_zero_stages = false;
template <int... S>
inline constexpr bool is_zero_stages<zero_stages<S...>> = true;
template <class T>
inline constexpr bool is_offload_choices = false;
template <bool... O>
inline constexpr bool is_offload_choices<offload_choices<O...>> = true;
template <class T>
inline constexpr bool is_recompute_choices = false;
template <bool... R>
inline constexpr bool is_recompute_choices<recompute_choices<R...>> = true;

template <class Stages = zero_stages<0, 1, 2, 3>, class Offload = offload_choices<false, true>,
          class Recompute = recompute_choices<false, true>>
struct training_space {
  static_assert(is_zero_stages<Stages>,
                "trinity::plan::training_space: the first slot takes the ZeRO stages. Fix: plan::zero_stages<...>.");
  static_assert(is_offload_choices<Offload>,
                "trinity::plan::training_space: the second slot takes the offload choices. Fix: "
                "plan::offload_choices<...>.");
  static_assert(is_recompute_choices<Recompute>,
                "trinity::plan::training_space: the third slot takes the recompute choices. Fix: "
                "plan::recompute_choices<...>.");
  static constexpr auto stages = Stages::values;
  static constexpr auto offload = Offload::values;
  static constexpr auto recompute = Recompute::values;
};

}  // namespace trinity::plan
