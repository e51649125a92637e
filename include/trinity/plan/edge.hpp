#pragma once
//! \file
//! Planning an edge video stream (the paper's §3): a camera's device analyses
//! frames at a fixed rate and may hand work to a server over an uplink. Three
//! places the analysis can run, each a trade:
//!  - on the device: the whole network runs locally and only the result goes up
//!    (compute for bandwidth; the weights must fit the device's memory);
//!  - split: the device runs the first part of the network and sends the
//!    feature at the cut, through a codec (compute for bandwidth, within the
//!    error budget; Neurosurgeon, Kang et al. 2017; Shao & Zhang 2020);
//!  - on the server: the device sends the video, at one of several encodings,
//!    and the server decodes and analyses it (bandwidth for compute; a
//!    generative decoder buys bits with server FLOPs, the paper's §3.1.2:
//!    0.15 bpp at 1e9 FLOPs, 0.075 at 1.4e10, 0.0375 at 1e11).
//! Per frame: device time (its FLOPs at its rate, plus the codec's encode),
//! uplink time (latency + bytes / bandwidth), server time (FLOPs at its rate,
//! plus a codec's decode); the frame's latency is their sum. The stream is
//! real-time: each stage must keep up with the frame rate. Energy is the
//! device's power over its busy time and its idle power over the rest of the
//! frame interval, the server's power over its busy time, and the uplink's
//! energy per byte; dollars are the
//! device's and server's rent over their busy time plus the metered bytes.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/resources/resource_vector.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

//! One way to send the video: bits per pixel on the wire, FLOPs per frame to encode (device) and decode (server).
struct video_encoding {
  std::string name;
  double bits_per_pixel = 0;
  flops encode{}, decode{};
  std::string source;
};

//! The paper's §3.1.2 example, the same perceptual quality at each: H.264 at 0.15 bpp decoded for ~1e9 FLOPs,
//! then a generative decoder at 0.075 bpp for 1.4e10 FLOPs and 0.0375 bpp for 1e11 FLOPs. The paper gives
//! decoder costs only; encoding is taken as free (a hardware encoder). Put your encoder's FLOPs in a workload file.
inline std::vector<video_encoding> paper_encodings() {
  const char* src = "AI Trinity paper, section 3.1.2 (computation vs bandwidth example)";
  return {{"h264", 0.15, flops{0}, flops{1e9}, src},
          {"generative-2x", 0.075, flops{0}, flops{1.4e10}, src},
          {"generative-4x", 0.0375, flops{0}, flops{1e11}, src}};
}

//! "h264, generative-2x, generative-4x": the encodings by name, as a plan's assumptions list them.
inline std::string encoding_names(const std::vector<video_encoding>& v) {
  std::string out;
  for (const auto& e : v) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

//! Codecs for a feature tensor sent once (no error feedback to carry): the value codecs of plan/codecs.hpp.
inline std::vector<model::compressor_cost> default_feature_codecs() {
  std::vector<model::compressor_cost> out;
  for (auto c : default_codecs()) {
    if (c.name == "int8-ef") c.name = "int8";  // one-shot: the same quantiser, nothing fed back
    if (c.name == "identity" || c.name == "bf16" || c.name == "int8") out.push_back(c);
  }
  return out;
}

struct edge_workload {
  std::string name;
  double frames_per_second = 30;
  std::size_t width = 1920, height = 1080;            //!< pixels per frame
  flops analysis{};                                   //!< the analysis network's FLOPs per frame
  double head_fraction = 0.5;                         //!< share of the network (FLOPs and weights) before the cut
  bytes feature_size{};                               //!< the feature at the cut, per frame, in fp32
  bytes result_size{};                                //!< what the analysis outputs per frame (detections)
  bytes model_bytes{};                                //!< the network's weights
  double error_budget = model::default_error_budget;  //!< largest relative error a feature codec may add
  std::string precision = "int8";                     //!< the precision the analysis runs at, on either side
  std::vector<video_encoding> encodings = paper_encodings();
  //! The fields taken by default, not from the input (plan/assumed.hpp): every plan prints them.
  assumptions assumed = {};

  [[nodiscard]] double pixels() const noexcept { return static_cast<double>(width) * static_cast<double>(height); }
  [[nodiscard]] seconds frame_interval() const noexcept { return seconds{1.0 / frames_per_second}; }
  [[nodiscard]] bytes video_frame(const video_encoding& e) const noexcept {
    return bytes{pixels() * e.bits_per_pixel / 8.0};
  }
};

inline void validate(const edge_workload& w, const system& s) {
  trinity::detail::require(!w.name.empty(), "workload.name", "a workload needs a name");
  trinity::detail::require(s.server.has_value(), "server",
                           s.name +
                               " names no server; an edge workload needs one to hand work to. Fix: add a "
                               "\"server\" (a device: name, compute, power) to the system");
  detail::require_positive(w.frames_per_second, "workload.frames_per_second");
  trinity::detail::require(w.width >= 1 && w.height >= 1, "workload.width", "a frame needs at least one pixel");
  detail::require_positive(w.analysis, "workload.analysis_flops");
  trinity::detail::require(w.head_fraction > 0 && w.head_fraction < 1, "workload.head_fraction",
                           "must lie strictly between 0 and 1: the cut is inside the network");
  detail::require_positive(w.feature_size, "workload.feature_size");
  detail::require_non_negative(w.result_size, "workload.result_size");
  detail::require_non_negative(w.model_bytes, "workload.model_bytes");
  detail::require_non_negative(w.error_budget, "workload.error_budget");
  detail::require_precision(w.precision, "workload.precision");
  trinity::detail::require(!w.encodings.empty(), "workload.encodings", "needs at least one way to send the video");
  for (std::size_t i = 0; i < w.encodings.size(); ++i) {
    const auto& e = w.encodings[i];
    const std::string at = "workload.encodings[" + std::to_string(i) + "]";
    trinity::detail::require(!e.name.empty(), at + ".name", "every encoding needs a name");
    detail::require_positive(e.bits_per_pixel, at + ".bits_per_pixel");
    detail::require_non_negative(e.encode, at + ".encode_flops");
    detail::require_non_negative(e.decode, at + ".decode_flops");
  }
}

enum class placement_site { device, split, server };

struct edge_plan {
  placement_site where = placement_site::server;
  std::size_t option = 0;  //!< split: the feature codec; server: the video encoding; device: unused
  friend bool operator==(const edge_plan&, const edge_plan&) = default;
};

struct edge_cost {
  seconds device_time{}, uplink_time{}, server_time{};
  flops device_flops{}, server_flops{};
  bytes sent{};                   //!< per frame over the uplink
  std::vector<bytes> tier_bytes;  //!< the device's tiers: the weights it holds
  double error = 0;
  double dollars = 0;
  resource_vector total;  //!< per frame: device + server FLOPs, bytes sent, device bytes, energy, latency
};

inline edge_cost price(const system& s, const edge_workload& w, const std::vector<model::compressor_cost>& codecs,
                       const edge_plan& p) {
  const auto& server = *s.server;
  edge_cost c;
  c.tier_bytes.assign(s.tiers.size(), bytes{});
  seconds device_codec{}, server_codec{};
  switch (p.where) {
    case placement_site::device:
      c.device_flops = w.analysis;
      c.sent = w.result_size;
      c.tier_bytes[0] = w.model_bytes;
      break;
    case placement_site::split: {
      const auto& k = codecs.at(p.option);
      c.device_flops = w.head_fraction * w.analysis;
      c.server_flops = (1.0 - w.head_fraction) * w.analysis;
      c.sent = k.name == "identity" ? w.feature_size : w.feature_size / k.ratio;
      if (k.name != "identity") {
        device_codec = w.feature_size / k.encode_rate;
        server_codec = w.feature_size / k.decode_rate;
      }
      c.error = k.relative_error;
      c.tier_bytes[0] = w.head_fraction * w.model_bytes;
      break;
    }
    case placement_site::server: {
      const auto& e = w.encodings.at(p.option);
      c.device_flops = e.encode;
      c.server_flops = e.decode + w.analysis;
      c.sent = w.video_frame(e);
      break;
    }
  }
  c.device_time = c.device_flops / s.device.rate(w.precision) + device_codec;
  c.uplink_time = s.interconnect.latency + c.sent / s.interconnect.bandwidth;
  c.server_time = c.server_flops / server.rate(w.precision) + server_codec;
  c.total.compute = c.device_flops + c.server_flops;
  c.total.bandwidth = c.sent;
  c.total.memory = c.tier_bytes[0];
  c.total.time = c.device_time + c.uplink_time + c.server_time;
  // The device is the camera's own, on for the whole frame interval: busy at its power, idle the rest. The
  // server is rented by the frame's work, so only its busy time counts.
  const seconds device_idle = c.device_time < w.frame_interval() ? w.frame_interval() - c.device_time : seconds{};
  c.total.energy = c.device_time * s.device.power + device_idle * s.device.idle_power + c.sent * s.interconnect.energy +
                   c.server_time * server.power;
  c.dollars = dollars(s, c.device_time, c.tier_bytes, c.sent) + c.server_time.value() / 3600.0 * server.price_per_hour;
  return c;
}

using edge_evaluated = candidate<edge_plan, edge_cost>;
//! Pareto keys: latency, energy, bytes sent, device bytes, dollars.
using edge_plan_result = result<edge_plan, edge_cost>;

inline std::string describe(const edge_plan& p, const edge_workload& w,
                            const std::vector<model::compressor_cost>& codecs) {
  switch (p.where) {
    case placement_site::device:
      return "analyse on the device, send results";
    case placement_site::split:
      return "split: device runs the head, sends the feature as " + codecs.at(p.option).name;
    default:
      return "send " + w.encodings.at(p.option).name + " video, analyse on the server";
  }
}

namespace detail {

inline std::string check(const system& s, const edge_workload& w, const edge_cost& c, const std::string& codec,
                         const std::optional<bytes>& budget) {
  if (budget && c.sent > *budget)
    return "uplink budget: sends " + to_string(c.sent) + " per frame, more than " + to_string(*budget);
  if (c.error > w.error_budget)
    return "error budget: " + codec + " adds relative error " + units::detail::format_number(c.error) + ", more than " +
           units::detail::format_number(w.error_budget);
  for (std::size_t t = 0; t < s.tiers.size(); ++t)
    if (c.tier_bytes[t] > s.tiers[t].capacity)
      return s.tiers[t].name + " capacity: needs " + to_string(c.tier_bytes[t]) + " of " +
             to_string(s.tiers[t].capacity);
  const seconds frame = w.frame_interval();
  const bytes_per_second rate = c.sent / frame;
  if (rate > s.interconnect.bandwidth)
    return s.interconnect.name + " rate: needs " + to_string(rate) + " of " + to_string(s.interconnect.bandwidth) +
           " to keep up with " + units::detail::format_number(w.frames_per_second) + " frames/s";
  if (c.device_time > frame)
    return s.device.name + " rate: " + to_string(c.device_time) + " per frame, more than the " + to_string(frame) +
           " between frames";
  if (c.server_time > frame)
    return s.server->name + " rate: " + to_string(c.server_time) + " per frame, more than the " + to_string(frame) +
           " between frames";
  return {};
}

inline std::string binding(const system& s, const edge_workload& w, const edge_evaluated& e) {
  if (!e.fits()) return e.violation;
  const auto& c = e.cost;
  const std::pair<double, std::string> parts[] = {{c.device_time.value(), s.device.name + " compute"},
                                                  {c.uplink_time.value(), s.interconnect.name},
                                                  {c.server_time.value(), s.server->name + " compute"}};
  const auto top = *std::max_element(std::begin(parts), std::end(parts));
  return top.second + " (" + pct(top.first / c.total.time.value()) + " of a " + to_string(c.total.time) + " frame); " +
         s.interconnect.name + " " + pct((c.sent / w.frame_interval()) / s.interconnect.bandwidth) + " busy";
}

//! The stream as the engine sees it: each encoding's video to the server, each codec's feature from a split,
//! or all on the device.
struct edge_problem {
  // Where the stream is analysed, and with which codec or encoding: one slot.
  struct placement {
    using spends = resources::compute;
    using saves = resources::bandwidth;
    static constexpr std::string_view name = "where the stream is analysed";
    static edge_plan& of(edge_plan& p) { return p; }
  };
  using slots = slot_list<placement>;
  using plan_type = edge_plan;
  using cost_type = edge_cost;
  static constexpr const char* time_word = "latency";

  const system& s;
  const edge_workload& w;
  const planner_options& o;
  const std::vector<model::compressor_cost>& ks;

  [[nodiscard]] const std::vector<model::compressor_cost>& codecs() const { return ks; }
  template <class F>
  void for_each_plan(F&& f) const {
    for (std::size_t i = 0; i < w.encodings.size(); ++i) f(edge_plan{placement_site::server, i});
    for (std::size_t i = 0; i < ks.size(); ++i) f(edge_plan{placement_site::split, i});
    f(edge_plan{placement_site::device, 0});
  }
  [[nodiscard]] edge_cost price(const edge_plan& p) const { return plan::price(s, w, ks, p); }
  [[nodiscard]] std::string check(const edge_plan& p, const edge_cost& c) const {
    return detail::check(s, w, c, p.where == placement_site::split ? ks[p.option].name : "", o.link_budget);
  }
  //! The data-centric pipeline: the first encoding's video to the server.
  [[nodiscard]] bool is_baseline(const edge_plan& p) const {
    return p.where == placement_site::server && p.option == 0;
  }
  // The objective, the runner-up, then fewer bytes sent, then less device memory.
  [[nodiscard]] bool better(const edge_evaluated& a, const edge_evaluated& b) const {
    const auto key = [&](const edge_cost& c) {
      return std::array{score(c, o.objective), score(c, runner_up(o.objective)), c.sent.value(),
                        c.total.memory.value()};
    };
    return key(a.cost) < key(b.cost);
  }
  [[nodiscard]] std::array<double, 5> pareto_keys(const edge_cost& c) const {
    return {c.total.time.value(), c.total.energy.value(), c.sent.value(), c.total.memory.value(), c.dollars};
  }
  [[nodiscard]] std::string describe(const edge_plan& p) const { return plan::describe(p, w, ks); }
  [[nodiscard]] std::string binding(const edge_evaluated& e) const { return detail::binding(s, w, e); }
  [[nodiscard]] std::vector<std::string> trades(const edge_plan_result& r) const {
    const auto& c = r.chosen();
    const auto& b = r.candidates[r.baseline];
    if (r.choice == r.baseline)
      return {"none: sending " + w.encodings[0].name + " video to the server is already the best that keeps up"};
    const auto what = [&](const edge_plan& p) -> std::string {
      switch (p.where) {
        case placement_site::device:
          return "device compute for uplink bandwidth and server compute";
        case placement_site::split:
          return "device compute and codec for uplink bandwidth";
        default:
          return p.option == 0 ? "none" : "server compute for uplink bandwidth";
      }
    };
    return {describe(c.plan) + " (" + what(c.plan) + "): sent " + to_string(b.cost.sent) + " -> " +
            to_string(c.cost.sent) + " per frame, device " + to_string(b.cost.device_flops) + " -> " +
            to_string(c.cost.device_flops) + ", server " + to_string(b.cost.server_flops) + " -> " +
            to_string(c.cost.server_flops) + ", latency " + to_string(b.cost.total.time) + " -> " +
            to_string(c.cost.total.time)};
  }
  // Few placements: every one is worth a line.
  [[nodiscard]] bool neighbour(const edge_plan_result&, std::size_t) const { return true; }
  [[noreturn]] void none_fits(const edge_plan_result& r) const {
    std::string why;
    for (const auto& e : r.candidates) why += "\n  " + describe(e.plan) + ": " + e.violation;
    throw invalid_input("workload", "no placement keeps up on " + s.name + ":" + why +
                                        "\nFix: a lower frame rate, a faster uplink, or a larger error budget");
  }
};

}  // namespace detail

//! Every placement priced, checked against the error budget, the device's memory and the frame rate; the
//! Pareto front; the best for the objective (ties: fewer bytes sent, then less device memory); and why.
//! The baseline is the data-centric pipeline: the first encoding's video to the server.
inline edge_plan_result plan_edge(const system& s, const edge_workload& w,
                                  std::vector<model::compressor_cost> codecs = default_feature_codecs(),
                                  const planner_options& o = {}) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  trinity::detail::require(!codecs.empty(), "codecs",
                           "give at least one feature codec (\"identity\" sends it as it is)");
  for (const auto& k : codecs) model::validate(k);
  return solve(detail::edge_problem{s, w, o, codecs}, o);
}

namespace presets {

//! A 1080p camera at 30 frames/s running a YOLOv8m-sized detector: 78.9 GFLOPs per 640×640 image and 25.9 M
//! parameters (Ultralytics' YOLOv8 model table), so 52 MB of fp16 weights. The cut after the backbone's third
//! stage leaves ~40% of the FLOPs on the device and a 512×40×40 fp32 feature (3.3 MB) — an illustrative cut
//! (the shape of YOLOv8m's P4 feature map); measure your network's. Results: 100 boxes × 24 bytes.
inline edge_workload edge_video_analytics() {
  edge_workload w;
  w.name = "edge-video-analytics";
  w.frames_per_second = 30;
  w.width = 1920;
  w.height = 1080;
  w.analysis = flops{78.9e9};
  w.head_fraction = 0.4;
  w.feature_size = bytes{512.0 * 40 * 40 * 4};
  w.result_size = bytes{100.0 * 24};
  w.model_bytes = bytes{25.9e6 * 2};
  assume(w.assumed, "error_budget", w.error_budget);
  assume(w.assumed, "precision", w.precision);
  assume(w.assumed, "encodings", encoding_names(w.encodings));
  return w;
}

inline std::optional<edge_workload> find_edge(std::string_view name) {
  if (name == "edge-video-analytics") return edge_video_analytics();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
