#pragma once
//! \file
//! One serving configuration priced, no search: what `trinity plan --parallelism tp=4,batch=64,weights=fp8,kv=fp8`
//! answers for an llm-serve workload, and what `trinity validate --serving` prices each published run through.
//!   tp=N          the replica's tensor-parallel degree (default 1)
//!   batch=N       the static batch: N requests prefilled together, then decoded together (default 1)
//!   weights=P     bf16, fp16, fp8 (weights and GEMMs in fp8), int8 or int4 (weight-only) (default: the workload's)
//!   kv=P          bf16, fp16 (2 bytes), int8 or fp8 (1 byte) (default bf16)
//!   prefix=T:S    a prefix cache of S bytes pooled in tier T (a tier's name; S as 64GB) (default: none)
//! An unknown key, a key given twice or a value not allowed is refused, naming it and what would be.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/detail/key_value_list.hpp>
#include <trinity/detail/nearest_name.hpp>
#include <trinity/error.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/units/parse.hpp>

namespace trinity::plan {

struct serving_configuration {
  serving_plan plan;
  std::string weights;  //!< the workload's precision, as given or as the workload had it
  std::string kv = "bf16";
};

namespace detail {

inline std::size_t configuration_count(std::string_view key, const std::string& value, const std::string& field) {
  std::size_t n = 0;
  for (const char ch : value) {
    if (ch < '0' || ch > '9' || n > 10'000'000)
      throw invalid_input(field, std::string(key) + "=" + value + ": must be a whole number from 1");
    n = n * 10 + static_cast<std::size_t>(ch - '0');
  }
  if (value.empty() || n == 0 || n > 10'000'000)
    throw invalid_input(field, std::string(key) + "=" + value + ": must be a whole number from 1 to 10000000");
  return n;
}

}  // namespace detail

//! Reads `text` for workload `w` on system `s`; the codec list is kv_codecs(s).
inline serving_configuration parse_serving_configuration(std::string_view text, const system& s,
                                                         const serving_workload& w,
                                                         const std::vector<model::compressor_cost>& codecs,
                                                         const std::string& field = "parallelism") {
  static constexpr std::string_view keys[] = {"tp", "batch", "weights", "kv", "prefix"};
  serving_configuration c{{1, 1, 0, bytes{}, 0}, w.precision, "bf16"};
  const auto fail = [&](const std::string& why) -> void { throw invalid_input(field, why); };
  const trinity::detail::key_value_form form{"tp=4,batch=64", "tp=4", " of an llm-serve configuration"};
  trinity::detail::for_each_key_value(text, field, keys, form, [&](const std::string& key, const std::string& value) {
    if (key == "tp") {
      c.plan.tensor_parallel = detail::configuration_count(key, value, field);
    } else if (key == "batch") {
      c.plan.batch = detail::configuration_count(key, value, field);
    } else if (key == "weights") {
      static constexpr std::string_view allowed[] = {"bf16", "fp16", "fp8", "int8", "int4"};
      if (std::find(std::begin(allowed), std::end(allowed), value) == std::end(allowed))
        fail("weights=" + value + ": use bf16, fp16, fp8, int8 or int4");
      c.weights = value;
    } else if (key == "kv") {
      if (value != "bf16" && value != "fp16" && value != "int8" && value != "fp8")
        fail("kv=" + value + ": use bf16, fp16 (2 bytes a value), int8 or fp8 (1 byte)");
      c.kv = value;
    } else {
      const auto colon = value.rfind(':');
      if (colon == std::string::npos) fail("prefix=" + value + ": write TIER:SIZE, e.g. prefix=host-ddr5:512GB");
      const std::string tier = value.substr(0, colon);
      std::size_t t = 0;
      while (t < s.tiers.size() && s.tiers[t].name != tier) ++t;
      if (t == s.tiers.size()) {
        std::vector<std::string_view> names;
        for (const auto& x : s.tiers) names.push_back(x.name);
        fail("prefix=" + value + ": \"" + tier + "\" is not a tier of " + s.name +
             trinity::detail::suggestion(tier, names));
      }
      try {
        c.plan.cache = units::parse<bytes>(value.substr(colon + 1), "prefix");
      } catch (const invalid_input& e) {
        fail("prefix=" + value + ": " + e.problem());
      }
      if (c.plan.cache <= bytes{}) fail("prefix=" + value + ": the cache's size must be positive");
      c.plan.cache_tier = t;
    }
  });
  const std::string kv_codec = c.kv == "bf16" || c.kv == "fp16" ? "identity" : c.kv;
  std::size_t k = 0;
  while (k < codecs.size() && codecs[k].name != kv_codec) ++k;
  if (k == codecs.size()) fail("kv=" + c.kv + ": " + s.name + "'s KV codecs have no " + kv_codec);
  c.plan.codec = k;
  return c;
}

//! A configuration priced, with why it does not fit (empty where it does).
struct priced_configuration {
  serving_configuration configuration;
  serving_workload workload;  //!< at the configuration's weights
  std::vector<model::compressor_cost> codecs;
  serving_cost cost;
  std::string violation;  //!< the first constraint it breaks, as the planner checks it (empty: it fits)
};

//! Prices the configuration `text` names for workload `w` on system `s`: as the planner prices a plan, with its
//! constraints checked (device memory, the objectives, the KV codec's error) and reported, not enforced.
inline priced_configuration price_configuration(const system& s, serving_workload w, std::string_view text,
                                                const std::string& field = "parallelism") {
  validate(s);
  priced_configuration out;
  out.codecs = kv_codecs(s);
  out.configuration = parse_serving_configuration(text, s, w, out.codecs, field);
  const auto& p = out.configuration.plan;
  w.precision = out.configuration.weights;
  try {
    validate(w, s);
  } catch (const invalid_input& e) {
    if (e.field() != "workload.precision") throw;
    throw invalid_input(field, "weights=" + w.precision + ": " + e.problem());
  }
  if (p.tensor_parallel > s.device.count)
    throw invalid_input(field, "tp=" + std::to_string(p.tensor_parallel) + ": " + s.name + " has " +
                                   std::to_string(s.device.count) + " devices in its scale-up domain");
  try {
    model::validate(replica_of(s, w, p, out.codecs[p.codec]));
  } catch (const invalid_input& e) {
    throw invalid_input(field, "tp=" + std::to_string(p.tensor_parallel) + ": " + e.problem());
  }
  out.cost = price(s, w, p, out.codecs);
  const std::size_t identity = detail::identity_codec(out.codecs, ": KV kept in 16 bits");
  out.violation = detail::serving_problem{{s, w, planner_options{}, out.codecs, identity}}.check(p, out.cost);
  out.workload = std::move(w);
  return out;
}

}  // namespace trinity::plan
