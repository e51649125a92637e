#pragma once
//! \file
//! Where a served request's time goes: its time to first token's prefill and its time per output token's decode
//! step, part by part (model::prefill_breakdown, model::decode_breakdown), each kernel with what bounds it, as text
//! and JSON. `trinity plan` tells it for the plan it picks or prices; `trinity validate --serving --explain` for a
//! measured run.

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>

#include <trinity/model/serving.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

//! A request's two passes as plan::price prices them: the prefill of its prompt less the cached prefix, and the
//! decode step its TPOT is, its batch's at the output's midpoint.
struct serving_time {
  double prompt_tokens = 0, cached_tokens = 0;
  model::prefill_parts prefill;
  double batch = 1, context = 0;
  model::decode_parts decode;
};

//! The passes of plan `p` (KV through `codec`), a share `hit_rate` of each prompt found in its prefix cache.
[[nodiscard]] inline serving_time serving_time_of(const plan::system& s, const plan::serving_workload& w,
                                                  const plan::serving_plan& p, const model::compressor_cost& codec,
                                                  double hit_rate) {
  const auto replica = plan::replica_of(s, w, p, codec);
  serving_time out;
  out.prompt_tokens = w.prompt_tokens;
  out.cached_tokens = hit_rate * w.prompt_tokens;  // as plan::price takes it
  out.prefill = model::prefill_breakdown(replica, w.prompt_tokens, out.cached_tokens);
  out.batch = static_cast<double>(p.batch);
  out.context = w.prompt_tokens + w.output_tokens / 2.0;  // model::time_per_output_token's step
  out.decode = model::decode_breakdown(replica, out.batch, out.context);
  return out;
}

namespace detail {
inline nlohmann::json parts_json(const model::prefill_parts& p) {
  return {{"multiplies_s", p.multiplies.value()},     {"attention_s", p.attention.value()},
          {"weights_read_s", p.weights_read.value()}, {"read_bound", p.read_bound()},
          {"overhead_s", p.overhead.value()},         {"eager_overhead_s", p.eager_overhead.value()},
          {"all_reduces_s", p.all_reduces.value()},   {"total_s", p.total().value()}};
}
inline nlohmann::json parts_json(const model::decode_parts& d) {
  const auto kernel = [](const model::bound_kernel& k) {
    return nlohmann::json{{"read_s", k.read.value()}, {"compute_s", k.compute.value()}, {"read_bound", k.read_bound()}};
  };
  return {{"multiplies", kernel(d.multiplies)},     {"attention", kernel(d.attention)},
          {"overhead_s", d.overhead.value()},       {"sequences_s", d.sequences.value()},
          {"all_reduces_s", d.all_reduces.value()}, {"total_s", d.total().value()}};
}
}  // namespace detail

//! {"prefill": {prompt_tokens, cached_tokens, parts}, "decode_step": {batch, context_tokens, parts}}.
[[nodiscard]] inline nlohmann::json to_json(const serving_time& x) {
  return {
      {"prefill",
       {{"prompt_tokens", x.prompt_tokens},
        {"cached_tokens", x.cached_tokens},
        {"parts", detail::parts_json(x.prefill)}}},
      {"decode_step", {{"batch", x.batch}, {"context_tokens", x.context}, {"parts", detail::parts_json(x.decode)}}}};
}

namespace detail {
// A table's row: the part, its time and its share of the pass, what bounds it.
inline void add_part(table& t, const std::string& part, seconds time, seconds pass, const std::string& bound) {
  t.add(
      {part, to_string(time) + (pass > seconds{} ? " (" + fixed(time / pass * 100, 0) + "%)" : std::string()), bound});
}
}  // namespace detail

//! The two passes as two tables, each part with its share and what bounds it.
inline void print(std::ostream& out, const serving_time& x) {
  const auto& p = x.prefill;
  const auto& d = x.decode;
  const std::string launches = "a fixed cost a layer: kernel launches, small kernels";
  const auto all_reduces = [](seconds t) {
    return t > seconds{} ? std::string("two a layer: a launch's latency, then the bytes")
                         : std::string("none: one device");
  };
  const auto bound = [](const model::bound_kernel& k, const char* read, const char* flops) {
    return k.read_bound() ? std::string("reading ") + read + " (" + flops + ": " + to_string(k.compute) + ")"
                          : std::string(flops) + " (reading " + read + ": " + to_string(k.read) + ")";
  };
  out << "The time to first token's prefill: " << fixed(x.prompt_tokens - x.cached_tokens, 0) << " tokens of "
      << fixed(x.prompt_tokens, 0) << " prefilled, in one pass\n";
  table t({"part", "predicted", "bound by"});
  if (p.read_bound()) {
    detail::add_part(
        t, "one read of the weights", p.weights_read, p.total(),
        "longer than the FLOPs: multiplies " + to_string(p.multiplies) + ", attention " + to_string(p.attention));
  } else {
    detail::add_part(t, "matrix multiplies", p.multiplies, p.total(), "FLOPs");
    detail::add_part(t, "attention", p.attention, p.total(), "FLOPs (a fused kernel)");
    t.add({"one read of the weights", "hidden", to_string(p.weights_read) + ", under the FLOPs"});
  }
  detail::add_part(t, "per-layer overhead", p.overhead, p.total(), launches);
  detail::add_part(t, "  prefill's, run eagerly", p.eager_overhead, p.total(),
                   "a fixed cost a layer: prefill's kernels, launched one by one");
  detail::add_part(t, "tensor-parallel all-reduces", p.all_reduces, p.total(), all_reduces(p.all_reduces));
  t.add({"prefill", to_string(p.total()), "the parts above, added"});
  t.print(out);
  out << "\nThe time per output token: a decode step of " << fixed(x.batch, 0)
      << (x.batch == 1 ? " sequence" : " sequences") << " at " << units::detail::format_number(x.context)
      << " tokens of context (the output's midpoint)\n";
  table u({"part", "predicted", "bound by"});
  detail::add_part(u, "matrix multiplies", d.multiplies.time(), d.total(), bound(d.multiplies, "the weights", "FLOPs"));
  detail::add_part(u, "attention", d.attention.time(), d.total(), bound(d.attention, "the KV cache", "FLOPs"));
  detail::add_part(u, "per-layer overhead", d.overhead, d.total(), launches);
  detail::add_part(u, "per-sequence overhead", d.sequences, d.total(),
                   "a fixed cost a sequence: sampling, the batch's bookkeeping");
  detail::add_part(u, "tensor-parallel all-reduces", d.all_reduces, d.total(), all_reduces(d.all_reduces));
  u.add({"decode step", to_string(d.total()), "the parts above, added"});
  u.print(out);
}

}  // namespace trinity::reports
