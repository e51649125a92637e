#pragma once
//! \file
//! Edge video analytics as a workload (workloads/workload.hpp): its JSON reader (`"type": "edge"`, the camera's
//! frames, the analysis and the encodings to choose from), its preset, and its plan: where the analysis runs and
//! what crosses the uplink.

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/edge.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/report.hpp>
#include <trinity/workloads/request.hpp>
#include <trinity/workloads/workload.hpp>

namespace trinity::io::detail {

inline constexpr key edge_keys[] = {{"name", required},
                                    {"type", required},
                                    {"frames_per_second", required},
                                    {"width"},
                                    {"height"},
                                    {"analysis_flops", required},
                                    {"head_fraction"},
                                    {"feature_size", required},
                                    {"result_size"},
                                    {"model_bytes"},
                                    {"error_budget"},
                                    {"precision"},
                                    {"encodings"},
                                    {"bitrate"}};
inline constexpr key encoding_keys[] = {
    {"name", required}, {"bits_per_pixel", required}, {"encode_flops"}, {"decode_flops"}, {"source"}};

inline plan::edge_workload read_edge(const json& j, const plan::system& s) {
  const object o(j, "", edge_keys, "an edge workload");
  plan::edge_workload w;
  field_problems each;  // every wrong value in one message
  each([&] { w.name = o.text("name"); });
  each([&] { w.frames_per_second = o.number("frames_per_second"); });
  each([&] { o.get("width", w.width, w.assumed); });
  each([&] { o.get("height", w.height, w.assumed); });
  each([&] { w.analysis = o.quantity<flops>("analysis_flops"); });
  each([&] { o.get("head_fraction", w.head_fraction, w.assumed); });
  each([&] { w.feature_size = o.quantity<bytes>("feature_size"); });
  each([&] { o.get("result_size", w.result_size, w.assumed); });
  each([&] { o.get("model_bytes", w.model_bytes, w.assumed); });
  each([&] { o.get("error_budget", w.error_budget, w.assumed); });
  if (o.has("precision"))
    each([&] { w.precision = precision_name(o, "precision"); });
  else
    plan::assume(w.assumed, "precision", w.precision);
  each.raise();  // the encodings and the bitrate read the frame's figures
  if (!o.has("encodings")) plan::assume(w.assumed, "encodings", plan::encoding_names(w.encodings));
  if (o.has("encodings")) {
    w.encodings.clear();
    for_each(
        o.at("encodings"), "encodings",
        [&](const json& e, const std::string& at) {
          const object x(e, at, encoding_keys, "an encoding");
          plan::video_encoding v;
          v.name = x.text("name");
          v.bits_per_pixel = x.number("bits_per_pixel");
          x.get("encode_flops", v.encode);
          x.get("decode_flops", v.decode);
          x.get("source", v.source);
          w.encodings.push_back(std::move(v));
        },
        256);
  }
  if (o.has("bitrate")) {
    // The camera's own stream: sets the first encoding's bits per pixel.
    const auto rate = o.quantity<bytes_per_second>("bitrate");
    if (w.encodings.empty()) fail("bitrate", "needs an encoding to apply to; give encodings or leave them out");
    if (!(w.frames_per_second > 0) || w.width == 0 || w.height == 0)
      fail("bitrate", "needs a positive frame rate and frame size to turn into bits per pixel");
    w.encodings[0].bits_per_pixel = rate.value() * 8.0 / (w.pixels() * w.frames_per_second);
  }
  return validated(std::move(w), s);
}

}  // namespace trinity::io::detail

namespace trinity::workloads {
namespace detail {

inline json edge_json(const plan::edge_evaluated& e, const plan::edge_plan_result& r, const plan::edge_workload& w) {
  const auto& c = e.cost;
  const char* where = e.plan.where == plan::placement_site::device  ? "device"
                      : e.plan.where == plan::placement_site::split ? "split"
                                                                    : "server";
  return {{"placement", where},
          {"codec", e.plan.where == plan::placement_site::split ? json(r.codecs[e.plan.option].name) : json(nullptr)},
          {"encoding",
           e.plan.where == plan::placement_site::server ? json(w.encodings[e.plan.option].name) : json(nullptr)},
          {"latency_s", c.total.time.value()},
          {"energy_j", c.total.energy.value()},
          {"dollars", c.dollars},
          {"sent_bytes", c.sent.value()},
          {"device_flops", c.device_flops.value()},
          {"server_flops", c.server_flops.value()},
          {"device_memory_bytes", c.total.memory.value()},
          {"time_parts_s",
           {{"device", c.device_time.value()}, {"uplink", c.uplink_time.value()}, {"server", c.server_time.value()}}},
          {"relative_error", c.error},
          {"fits", e.fits()}};
}

inline void plan_edge(const request& a, const plan::system& s, const plan::edge_workload& w, std::ostream& out) {
  const auto r = planned([&] { return plan::plan_edge(s, w, plan::default_feature_codecs(), options_of(a.planning)); });
  const auto& x = r.explanation;
  if (a.json) {
    print_result_json(out, a, s, w, "edge", {}, r, [&](const plan::edge_evaluated& e) { return edge_json(e, r, w); });
    return;
  }
  const auto& c = r.chosen().cost;
  out << "Plan for " << w.name << " on " << s.name << " (" << s.device.name << " to " << s.server->name << " over "
      << s.interconnect.name << "), best " << a.planning.objective << " of " << r.candidates.size()
      << " candidates:\n\n  " << plan::describe(r.chosen().plan, w, r.codecs) << "\n\n";
  table t({"resource", "predicted per frame"});
  t.add({"latency", to_string(c.total.time) + " (device " + to_string(c.device_time) + ", uplink " +
                        to_string(c.uplink_time) + ", server " + to_string(c.server_time) + ")"});
  t.add({"uplink", to_string(c.sent) + " (" + to_string(c.sent / w.frame_interval()) + " of " +
                       to_string(s.interconnect.bandwidth) + ")"});
  t.add({"compute", to_string(c.device_flops) + " on the device, " + to_string(c.server_flops) + " on the server"});
  t.add({"energy", to_string(c.total.energy)});
  t.add({"cost", plan::format_dollars(c.dollars) + " (" + plan::format_dollars(c.dollars * w.frames_per_second * 3600) +
                     " per hour of stream)"});
  t.add({s.tiers[0].name, to_string(c.tier_bytes[0]) + " of " + to_string(s.tiers[0].capacity)});
  t.print(out);
  print_assumed(out, s, w.assumed);
  print_explanation(out, x, plan::describe(r.candidates[r.baseline].plan, w, r.codecs), "Alternatives");
  out << "\nPareto front (latency, energy, bytes sent, device memory, dollars): " << r.pareto.size() << " plans\n";
}

}  // namespace detail

//! Video analytics from an edge device to a server (plan/edge.hpp): analyse on the device, split the model and
//! send features through a codec, or send encoded frames. `"type": "edge"`.
struct edge {
  static constexpr std::string_view type = "edge";
  using description = plan::edge_workload;

  static description read(const io::json& j, const plan::system& s, const read_context&) {
    return io::detail::read_edge(j, s);
  }
  static std::vector<std::string_view> preset_names() { return {"edge-video-analytics"}; }
  static std::optional<description> preset(std::string_view name, const plan::system&) {
    return plan::presets::find_edge(name);
  }
  static void plan(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "plan");
    detail::plan_edge(a, s, w, out);
  }
  //! A frame's uplink transfer on the device-to-server link.
  static void simulate(const request& a, const plan::system& s, description& w, std::ostream& out) {
    refuse_layout_flags(a, "simulate");
    const auto r =
        planned([&] { return plan::plan_edge(s, w, plan::default_feature_codecs(), options_of(a.planning)); });
    const auto sim = planned([&] { return plan::simulate(s, w, r); });
    print_simulation(out, a, s, plan::describe(r.chosen().plan, w, r.codecs), s.device.name + " -> " + s.server->name,
                     sim);
  }
};

}  // namespace trinity::workloads
