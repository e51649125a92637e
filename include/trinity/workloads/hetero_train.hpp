#pragma once
//! \file
//! Heterogeneous training as a workload (workloads/workload.hpp): its JSON reader (`"type": "hetero-train"`: the
//! producers, the link, the phases of the data), its preset, and its plan: colocated against disaggregated
//! producers, and the streams that fill the link.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/hetero_train.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::io::detail {

inline constexpr key hetero_train_keys[] = {{"name", required},        {"type", required},       {"consumers"},
                                            {"devices_per_node"},      {"producer", required},   {"max_producers"},
                                            {"link", required},        {"stream_cap"},           {"max_streams"},
                                            {"encode_high", required}, {"encode_low", required}, {"phases", required}};
inline constexpr key producer_keys[] = {{"name", required}, {"power"}, {"price_per_hour"}, {"source"}};
inline constexpr key phase_keys[] = {
    {"samples"}, {"sample", required}, {"produce_per_second", required}, {"consume_per_second", required}};

// The training's phases: each its sample size and the rates it is produced and consumed at.
inline void read_phases(const object& o, plan::hetero_train_workload& w) {
  for_each(
      o.at("phases"), "phases",
      [&](const json& e, const std::string& at) {
        const object x(e, at, phase_keys, "a phase");
        model::sample_phase ph;
        x.get("samples", ph.samples, w.assumed);
        ph.sample = x.quantity<bytes>("sample");
        ph.produce_per_second = x.number("produce_per_second");
        ph.consume_per_second = x.number("consume_per_second");
        w.phases.push_back(ph);
      },
      1024);
}

// Producers encode, consumers (the system's devices) train, over a link of capped streams (plan/hetero_train.hpp).
inline plan::hetero_train_workload read_hetero_train(const json& j, const plan::system& s) {
  const object o(j, "", hetero_train_keys, "a hetero-train workload");
  plan::hetero_train_workload w;
  field_problems each;  // every wrong value in one message
  each([&] { w.name = o.text("name"); });
  if (o.has("consumers"))
    each([&] { w.consumers = o.count("consumers"); });
  else
    plan::assume(w.assumed, "consumers", s.device.count);  // 0 in the workload: every device
  each([&] { o.get("devices_per_node", w.devices_per_node, w.assumed); });
  each([&] {
    const object p(o.at("producer"), "producer", producer_keys, "a producer class");
    w.producer.name = p.text("name");
    p.get("power", w.producer.power, w.assumed);
    p.get("price_per_hour", w.producer.price_per_hour, w.assumed);
    p.get("source", w.producer.source);
  });
  each([&] { o.get("max_producers", w.max_producers, w.assumed); });
  each([&] { w.link = o.quantity<bytes_per_second>("link"); });
  each([&] { o.get("stream_cap", w.stream_cap, w.assumed); });
  each([&] { o.get("max_streams", w.max_streams, w.assumed); });
  each([&] { w.encode_high = o.number("encode_high"); });
  each([&] { w.encode_low = o.number("encode_low"); });
  each([&] { read_phases(o, w); });
  each.raise();
  return validated(std::move(w), s);
}

}  // namespace trinity::io::detail

namespace trinity::workloads {
namespace detail {

inline json hetero_train_json(const plan::hetero_train_evaluated& e) {
  const auto& c = e.cost;
  return {{"disaggregated", e.plan.disaggregated},
          {"producers", e.plan.producers},
          {"streams", e.plan.streams},
          {"samples_per_second", c.samples_per_second},
          {"time_per_sample_s", c.total.time.value()},
          {"energy_per_sample_j", c.total.energy.value()},
          {"dollars_per_sample", c.dollars},
          {"consumer_utilization", c.utilization},
          {"bubble_fraction", c.bubble},
          {"streams_carry_bytes_per_second", c.carried.value()},
          {"link_busy", c.link_busy}};
}

inline void plan_hetero_train(const request& a, const plan::system& s, const plan::hetero_train_workload& w,
                              std::ostream& out) {
  refuse_codec_flags(a.planning, "hetero-train", "hetero-train sends latents as they are");
  const auto r = planned([&] { return plan::plan_hetero_train(s, w, options_of(a.planning)); });
  const auto answers = plan::answers(w);
  if (a.json) {
    print_result_json(out, a, s, w, "hetero_train",
                      {{"answers",
                        {{"producers_per_consumer_device", answers.producers_per_consumer},
                         {"streams_to_fill_link", answers.streams_to_fill},
                         {"one_stream_bytes_per_second", answers.one_stream.value()},
                         {"nodes_fed", answers.nodes_fed}}}},
                      r, [](const plan::hetero_train_evaluated& e) { return hetero_train_json(e); });
    return;
  }
  const auto& x = r.explanation;
  const auto& c = r.chosen().cost;
  const auto& b = r.candidates[r.baseline].cost;
  out << "Plan for " << w.name << " on " << s.name << " (" << w.consumer_count(s) << " " << s.device.name
      << " consumers, " << w.producer.name << " producers over a " << to_string(w.link) << " link), best "
      << a.planning.objective << " of " << r.candidates.size() << " candidates:\n\n  "
      << plan::describe(r.chosen().plan, w) << "\n\n";
  table t({"", "chosen", "colocated (baseline)"});
  t.add({"samples/s trained", units::detail::format_number(c.samples_per_second),
         units::detail::format_number(b.samples_per_second)});
  t.add({"consumers training", plan::detail::pct(c.utilization), plan::detail::pct(b.utilization)});
  t.add({"consumers waiting (bubble)", plan::detail::pct(c.bubble), plan::detail::pct(b.bubble)});
  t.add({"streams carry", to_string(c.carried), "-"});
  t.add({"link busy", plan::detail::pct(c.link_busy), "-"});
  t.add({"energy per sample", to_string(c.total.energy), to_string(b.total.energy)});
  t.print(out);
  print_assumed(out, s, w.assumed);
  print_explanation(out, x, plan::describe(r.candidates[r.baseline].plan, w),
                    "Alternatives one producer or one stream away");
  out << "\nPareto front (time, energy, dollars per sample): " << r.pareto.size() << " plans\n";
}

}  // namespace detail

//! Training fed by a fleet of producers that encode its samples (plan/hetero_train.hpp): colocated or
//! disaggregated, how many producers, how many streams over the link. `"type": "hetero-train"`.
struct hetero_train {
  static constexpr std::string_view type = "hetero-train";
  using description = plan::hetero_train_workload;

  static description read(const io::json& j, const plan::system& s, const read_context&) {
    return io::detail::read_hetero_train(j, s);
  }
  static std::vector<std::string_view> preset_names() { return {"wan22-t2v-hetero"}; }
  static std::optional<description> preset(std::string_view name, const plan::system&) {
    return plan::presets::find_hetero_train(name);
  }
  static void plan(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "plan");
    detail::plan_hetero_train(a, s, w, out);
  }
  static void simulate(const request& a, const plan::system&, description&, std::ostream&) {
    throw bad_flag("--workload", a.workload,
                   "is a hetero-train workload; its link is measured by `trinity-stream "
                   "demo`, not simulated on a fabric");
  }
};

}  // namespace trinity::workloads
