#pragma once
//! \file
//! The planner's search with types of a user's own beside the built-in ones: a codec written against the
//! Compressor concept, calibrated on the machine at hand, joins the codecs a training plan chooses among; a tier
//! written against the Tier concept joins a system's tiers, where optimizer states may be offloaded.
//!
//!   auto codecs = plan::default_codecs();
//!   codecs.push_back(plan::calibrated_codec<my_codec>("mine"));
//!   const auto s = plan::with_tier<my_pool>(plan::presets::h100_infiniband());
//!   auto r = plan::plan_training(s, w, codecs);   // my_codec and my_pool are candidates like any other

#include <cstddef>
#include <string>
#include <utility>

#include <trinity/compress/any_compressor.hpp>
#include <trinity/compress/calibrate.hpp>
#include <trinity/compress/compressor.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/tiers/tier.hpp>

namespace trinity::plan {

//! What the codec C costs here, measured as `trinity calibrate` measures the built-in ones: its ratio, encode and
//! decode rates and relative error on `floats` normally distributed floats (N(0,1), like a gradient), the fastest
//! of `options.repeats` runs, under `name`.
template <class C>
[[nodiscard]] model::compressor_cost calibrated_codec(std::string name, C prototype = {},
                                                      std::size_t floats = std::size_t{1} << 20,
                                                      compress::calibration_options options = {}) {
  static_assert(diagnose_compressor<C>(), "trinity: plan::calibrated_codec<C> measures a Compressor");
  const auto samples = compress::normal_tensors(3, floats, 2026);
  return compress::measure(compress::any_compressor(std::move(name), std::move(prototype)), samples, options);
}

//! `s` with the tier T below its others, at `price_per_gb_hour` (0: the device's price covers it).
template <class T>
[[nodiscard]] system with_tier(system s, double price_per_gb_hour = 0) {
  static_assert(diagnose_tier<T>(), "trinity: plan::with_tier<T> adds a Tier");
  s.tiers.push_back(tier_of(T::descriptor, price_per_gb_hour));
  validate(s);
  return s;
}

}  // namespace trinity::plan
