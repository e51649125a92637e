#pragma once
//! \file
//! Planning heterogeneous producer/consumer training (paper §4.2): the
//! system's devices train (the consumers, a DiT on high-end GPUs); each sample
//! must first be encoded (a video's VAE latent). Two ways to run it:
//!  - colocated, the untraded baseline: each consumer encodes its own samples
//!    and spends that time not training;
//!  - disaggregated: P producer devices of a cheaper class encode, and send
//!    the latents over an inter-cluster link as N parallel streams, each held
//!    to a sending thread's cap (model/hetero.hpp prices what arrives).
//! The planner searches P and N, and picks the plan that trains fastest (per
//! sample), then the one with fewer producers, then fewer streams: the least
//! that keeps the consumers busy. Its explanation answers the paper's three
//! questions: how many producers replace a consumer-class device's encoding,
//! how many streams break a thread's cap, and how many consumer nodes the link
//! feeds.
//!
//! Per phase (a share of the samples, its sample size and rates: the data
//! distribution shifting), samples/s is min(C · train, supply(P, N)) when
//! disaggregated and C / (1/train + 1/encode_on_consumer) when colocated; a
//! plan's time per sample is Σ wall / Σ samples. Energy counts every device
//! (consumers and producers) powered for the wall time; dollars their rent.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/hetero.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

struct hetero_train_workload {
  std::string name;
  std::size_t consumers = 0;         //!< consumer-class devices training (the system's device); 0: its count
  std::size_t devices_per_node = 8;  //!< consumers per node, for "nodes the link feeds"
  device_spec producer;              //!< the producer class: name, power, price (its compute is not read)
  std::size_t max_producers = 256;   //!< producer devices available
  bytes_per_second link{};           //!< the inter-cluster link, one way
  bytes_per_second stream_cap{};     //!< one stream's most (a sending thread's limit; 0: uncapped)
  std::size_t max_streams = 64;      //!< streams (sending threads or processes) a producer side may open
  //! Encoding rates of the two classes, in any one unit: a consumer encodes encode_high / encode_low times
  //! as fast as a producer.
  double encode_high = 0, encode_low = 0;
  //! The phases: each its samples (a share), its sample's bytes, a producer's encoding rate
  //! (produce_per_second) and a consumer's training rate (consume_per_second).
  std::vector<model::sample_phase> phases;
  //! The fields taken by default, not from the input (plan/assumed.hpp): every plan prints them.
  assumptions assumed = {};

  [[nodiscard]] std::size_t consumer_count(const system& s) const noexcept {
    return consumers ? consumers : s.device.count;
  }
  [[nodiscard]] double encode_ratio() const noexcept { return encode_high / encode_low; }
};

inline void validate(const hetero_train_workload& w, const system& s) {
  trinity::detail::require(!w.name.empty(), "workload.name", "a workload needs a name");
  trinity::detail::require(w.consumer_count(s) >= 1, "workload.consumers", "must be at least 1");
  trinity::detail::require(w.devices_per_node >= 1, "workload.devices_per_node", "must be at least 1");
  trinity::detail::require(!w.producer.name.empty(), "workload.producer.name", "name the producer class");
  detail::require_non_negative(w.producer.power, "workload.producer.power");
  detail::require_non_negative(w.producer.price_per_hour, "workload.producer.price_per_hour");
  trinity::detail::require(w.max_producers >= 1 && w.max_producers <= 4096, "workload.max_producers",
                           "must be 1 to 4096");
  detail::require_positive(w.link, "workload.link");
  detail::require_non_negative(w.stream_cap, "workload.stream_cap");
  trinity::detail::require(w.max_streams >= 1 && w.max_streams <= 1024, "workload.max_streams", "must be 1 to 1024");
  detail::require_positive(w.encode_high, "workload.encode_high");
  detail::require_positive(w.encode_low, "workload.encode_low");
  trinity::detail::require(!w.phases.empty(), "workload.phases", "give at least one phase");
  for (std::size_t i = 0; i < w.phases.size(); ++i) {
    const std::string at = "workload.phases[" + std::to_string(i) + "]";
    const auto& p = w.phases[i];
    detail::require_positive(p.samples, at + ".samples");
    detail::require_positive(p.sample, at + ".sample");
    detail::require_positive(p.produce_per_second, at + ".produce_per_second");
    detail::require_positive(p.consume_per_second, at + ".consume_per_second");
  }
}

struct hetero_train_plan {
  bool disaggregated = false;  //!< false: the consumers encode their own samples
  std::size_t producers = 0;
  std::size_t streams = 0;
  friend bool operator==(const hetero_train_plan&, const hetero_train_plan&) = default;
};

struct hetero_train_cost {
  double samples_per_second = 0;  //!< trained, over all phases
  double utilization = 0;         //!< the consumers' share of the wall time spent training
  double bubble = 0;              //!< their share waiting for samples (disaggregated only)
  bytes_per_second carried{};     //!< what the streams carry at most
  double link_busy = 0;           //!< the link's busy share
  double dollars = 0;             //!< per sample
  struct {
    seconds time{};   //!< wall time per sample
    joules energy{};  //!< per sample
  } total;
};

inline hetero_train_cost price(const system& s, const hetero_train_workload& w, const hetero_train_plan& p) {
  hetero_train_cost c;
  const auto consumers = w.consumer_count(s);
  const double C = static_cast<double>(consumers);
  const model::stream_link link{w.link, std::max<std::size_t>(p.streams, 1), w.stream_cap};
  double wall = 0, training = 0, samples = 0, bytes_moved = 0;
  for (const auto& ph : w.phases) {
    const double take = C * ph.consume_per_second;
    double rate = 0;
    if (p.disaggregated) {
      rate = std::min(take, model::supply(p.producers, ph, link));
      bytes_moved += ph.samples * ph.sample.value();
    } else {
      const double encode_on_consumer = ph.produce_per_second * w.encode_ratio();
      rate = C / (1.0 / ph.consume_per_second + 1.0 / encode_on_consumer);
    }
    wall += ph.samples / rate;
    training += ph.samples / take;
    samples += ph.samples;
  }
  c.samples_per_second = samples / wall;
  c.utilization = training / wall;
  c.bubble = p.disaggregated ? 1.0 - c.utilization : 0.0;
  c.carried = p.disaggregated ? model::carried(link) : bytes_per_second{};
  c.link_busy = p.disaggregated ? bytes_moved / wall / w.link.value() : 0.0;
  c.total.time = seconds{wall / samples};
  const double P = p.disaggregated ? static_cast<double>(p.producers) : 0.0;
  c.total.energy = (C * s.device.power + P * w.producer.power) * c.total.time;
  c.dollars = (C * s.device.price_per_hour + P * w.producer.price_per_hour) * c.total.time.value() / 3600.0;
  return c;
}

using hetero_train_evaluated = candidate<hetero_train_plan, hetero_train_cost>;
using hetero_train_result = result<hetero_train_plan, hetero_train_cost>;

inline std::string describe(const hetero_train_plan& p, const hetero_train_workload& w) {
  if (!p.disaggregated) return "colocated: the consumers encode their own samples";
  return std::to_string(p.producers) + " " + w.producer.name + " producer" + (p.producers == 1 ? "" : "s") + " over " +
         std::to_string(p.streams) + " stream" + (p.streams == 1 ? "" : "s");
}

//! The paper's three answers for a workload, from model/hetero.hpp.
struct hetero_answers {
  double producers_per_consumer = 0;  //!< producers that do one consumer-class device's encoding (e_high / e_low)
  std::size_t streams_to_fill = 0;    //!< streams whose caps together reach the link
  std::size_t nodes_fed = 0;          //!< consumer nodes the link feeds at full speed, with those streams
  bytes_per_second one_stream{};      //!< what one stream carries
};

inline hetero_answers answers(const hetero_train_workload& w) {
  hetero_answers a;
  a.producers_per_consumer = model::producers_per_consumer_freed(w.encode_high, w.encode_low);
  a.streams_to_fill = model::streams_to_fill(w.link, w.stream_cap);
  a.one_stream = model::carried({w.link, 1, w.stream_cap});
  // The heaviest phase's demand per node bounds the nodes fed.
  std::size_t nodes = static_cast<std::size_t>(-1);
  for (const auto& ph : w.phases)
    nodes = std::min(
        nodes, model::nodes_supported({w.link, a.streams_to_fill, w.stream_cap},
                                      static_cast<double>(w.devices_per_node) * ph.consume_per_second, ph.sample));
  a.nodes_fed = nodes;
  return a;
}

namespace detail {

inline std::string hetero_binding(const system& s, const hetero_train_workload& w, const hetero_train_evaluated& e) {
  const auto& p = e.plan;
  const auto& c = e.cost;
  if (!p.disaggregated)
    return s.device.name + " compute: " + pct(1 - c.utilization) + " of the consumers' time goes to encoding";
  if (c.bubble <= 1e-12) return s.device.name + " compute: the consumers train all the time";
  // What falls short in the phase that idles the consumers most.
  const double C = static_cast<double>(w.consumer_count(s));
  const model::stream_link link{w.link, p.streams, w.stream_cap};
  std::string what;
  double worst = 2;
  for (const auto& ph : w.phases) {
    const double made = static_cast<double>(p.producers) * ph.produce_per_second;
    const double moved = (model::carried(link) / ph.sample).value();
    const double share = std::min(made, moved) / (C * ph.consume_per_second);
    if (share >= worst) continue;
    worst = share;
    if (made <= moved)
      what = w.producer.name + " producers (" + std::to_string(p.producers) + " make " +
             units::detail::format_number(made) + " samples/s)";
    else if (w.stream_cap.value() > 0 && static_cast<double>(p.streams) * w.stream_cap < w.link)
      what = "the streams' caps (" + std::to_string(p.streams) + " x " + to_string(w.stream_cap) + ")";
    else
      what = "the link (" + to_string(w.link) + ")";
  }
  return what + ": the consumers wait " + pct(c.bubble) + " of the time";
}

struct hetero_train_problem {
  // Encoding on producers over streams, or on the consumers: one slot.
  struct disaggregation {
    using spends = resources::bandwidth;
    using saves = resources::time;
    static constexpr std::string_view name = "disaggregation";
    static hetero_train_plan& of(hetero_train_plan& p) { return p; }
  };
  using slots = slot_list<disaggregation>;
  using plan_type = hetero_train_plan;
  using cost_type = hetero_train_cost;
  static constexpr const char* time_word = "time per sample";

  const system& s;
  const hetero_train_workload& w;
  const planner_options& o;
  std::vector<model::compressor_cost> none{};

  [[nodiscard]] const std::vector<model::compressor_cost>& codecs() const { return none; }
  template <class F>
  void for_each_plan(F&& f) const {
    f(hetero_train_plan{false, 0, 0});
    for (std::size_t n = 1; n <= w.max_streams; ++n)
      for (std::size_t p = 1; p <= w.max_producers; ++p) f(hetero_train_plan{true, p, n});
  }
  [[nodiscard]] hetero_train_cost price(const hetero_train_plan& p) const { return plan::price(s, w, p); }
  [[nodiscard]] std::string check(const hetero_train_plan&, const hetero_train_cost&) const { return {}; }
  [[nodiscard]] bool is_baseline(const hetero_train_plan& p) const { return !p.disaggregated; }
  // The objective, then fewer producers, then fewer streams: the least that keeps the consumers busy.
  [[nodiscard]] bool better(const hetero_train_evaluated& a, const hetero_train_evaluated& b) const {
    const auto key = [&](const hetero_train_evaluated& e) {
      return std::array{score(e.cost, o.objective), static_cast<double>(e.plan.producers),
                        static_cast<double>(e.plan.streams)};
    };
    return key(a) < key(b);
  }
  [[nodiscard]] std::array<double, 3> pareto_keys(const hetero_train_cost& c) const {
    return {c.total.time.value(), c.total.energy.value(), c.dollars};
  }
  [[nodiscard]] std::string describe(const hetero_train_plan& p) const { return plan::describe(p, w); }
  [[nodiscard]] std::string binding(const hetero_train_evaluated& e) const { return hetero_binding(s, w, e); }
  [[nodiscard]] std::vector<std::string> trades(const hetero_train_result& r) const {
    const auto& c = r.chosen();
    const auto& b = r.candidates[r.baseline];
    const auto a = answers(w);
    const double C = static_cast<double>(w.consumer_count(s));
    std::vector<std::string> out;
    if (r.choice == r.baseline) {
      out.push_back("none: encoding on the consumers is already the best plan");
    } else {
      out.push_back("producer devices and link bandwidth for consumer compute: " + describe(c.plan) +
                    " take the encoding off the consumers, who now train " + pct(c.cost.utilization) +
                    " of the time instead of " + pct(b.cost.utilization) + "; samples/s " +
                    units::detail::format_number(b.cost.samples_per_second) + " -> " +
                    units::detail::format_number(c.cost.samples_per_second));
      out.push_back("the encoding of one " + s.device.name + " takes " +
                    units::detail::format_number(a.producers_per_consumer) + " " + w.producer.name +
                    " (e_high / e_low), so " +
                    std::to_string(model::whole_producers_per_consumer_freed(w.encode_high, w.encode_low)) +
                    " producers replace one consumer-class device");
    }
    out.push_back("one stream carries " + to_string(a.one_stream) + "; " + std::to_string(a.streams_to_fill) +
                  " streams fill the " + to_string(w.link) + " link");
    out.push_back("with those streams the link feeds " + std::to_string(a.nodes_fed) + " nodes of " +
                  std::to_string(w.devices_per_node) + " consumers at full speed (this plan trains " +
                  units::detail::format_number(C / static_cast<double>(w.devices_per_node)) + " nodes)");
    return out;
  }
  // The baseline, and the plans one producer or one stream away from the choice.
  [[nodiscard]] bool neighbour(const hetero_train_result& r, std::size_t i) const {
    const auto& p = r.candidates[i].plan;
    const auto& c = r.chosen().plan;
    if (!p.disaggregated || !c.disaggregated) return !p.disaggregated;
    const auto d = [](std::size_t x, std::size_t y) { return x > y ? x - y : y - x; };
    return d(p.producers, c.producers) + d(p.streams, c.streams) == 1;
  }
  [[noreturn]] void none_fits(const hetero_train_result&) const {
    throw invalid_input("workload", "no plan fits");  // unreachable: every plan fits
  }
  [[nodiscard]] std::string tie_note(const hetero_train_evaluated& e, const hetero_train_evaluated& chosen) const {
    return "trains as fast, with " + std::to_string(e.plan.producers) + " producers and " +
           std::to_string(e.plan.streams) + " streams where " + std::to_string(chosen.plan.producers) + " and " +
           std::to_string(chosen.plan.streams) + " do";
  }
};

}  // namespace detail

//! Every plan priced (colocated, and each producer count and stream count up to the workload's limits), the
//! Pareto front, the fastest (ties: fewer producers, then fewer streams) and why.
inline hetero_train_result plan_hetero_train(const system& s, const hetero_train_workload& w,
                                             const planner_options& o = {}) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  return solve(detail::hetero_train_problem{s, w, o}, o);
}

namespace presets {

//! The paper's run (§4.2.2), as model::presets::wan22_t2v() states its inputs (link, cap, sample, rates and
//! the two classes' encoding rates, each sourced or named as an assumption there), on 8 nodes of 8 consumers.
//! The producer class is the L40S whose bandwidth gives e_low: 350 W (NVIDIA L40S data sheet). Up to 128 of
//! them and 64 streams may be used (assumptions: the planner's search bounds).
inline hetero_train_workload wan22_t2v_hetero() {
  const auto m = model::presets::wan22_t2v();
  hetero_train_workload w;
  w.name = "wan22-t2v-hetero";
  w.consumers = 64;
  w.devices_per_node = m.devices_per_node;
  w.producer.name = "L40S";
  w.producer.power = watts{350};
  w.producer.source = "NVIDIA L40S data sheet: 350 W max board power, 864 GB/s GDDR6";
  w.max_producers = 128;
  w.link = m.link.bandwidth;
  w.stream_cap = m.link.stream_cap;
  w.max_streams = 64;
  w.encode_high = m.encode_high;
  w.encode_low = m.encode_low;
  w.phases = {m.phase};
  assume(w.assumed, "producer.price_per_hour", w.producer.price_per_hour);
  return w;
}

inline std::optional<hetero_train_workload> find_hetero_train(std::string_view name) {
  if (name == "wan22-t2v-hetero") return wan22_t2v_hetero();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
