#pragma once
//! \file
//! Planning a data-curation pipeline (paper §5.2): CPU-bound operators run on
//! the host's CPU workers, device-bound models on the system's devices. The
//! untraded plan holds one model per device (devices split among the models
//! in whole numbers, each further device to the model that binds); the
//! others spend device memory on co-residency: for each budget per device (every
//! total of a set of models that fits in the device's memory), the placement
//! model::placement_for finds. model/coresidency.hpp prices each: samples/s
//! is min(CPU workers' rate, Hall's bound over the models-devices graph), and
//! device utilisation X · Σ work / devices.
//!
//! A model's device-seconds per sample are its FLOPs per sample over the
//! device's dense rate times the share of it that model's kernels reach (its
//! efficiency, an input). The planner picks the fastest plan, then the one
//! that spends the least memory per device, then the one holding fewest
//! models; its explanation says what the memory bought, what binds, and the
//! budget past which more memory stops helping.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/model/coresidency.hpp>
#include <trinity/plan/assumed.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

//! One operator of a curation workload.
struct curation_stage {
  std::string name;
  bool device = false;     //!< a model on the system's devices, or a CPU-bound operator
  double cpu_seconds = 0;  //!< a CPU operator: seconds per sample on one CPU worker
  flops work{};            //!< a model: FLOPs per sample
  double efficiency = 0;   //!< a model: share of the device's dense rate its kernels reach (0: the workload's)
  bytes memory{};          //!< a model: resident bytes on a device (weights and working set)
  double share = 1;        //!< share of the samples that reach it
  std::string source;      //!< where its figures come from
};

struct data_curation_workload {
  std::string name;
  std::size_t devices = 0;           //!< devices running the models; 0: the system's count
  std::size_t cpu_workers = 0;       //!< CPU workers running the CPU operators
  double model_efficiency = 0.4;     //!< a model's share of the device's dense rate, where it gives none
  double sharing_efficiency = 0.95;  //!< compute a device keeps when it holds more than one model
  std::vector<curation_stage> operators;
  //! The fields taken by default, not from the input (plan/assumed.hpp): every plan prints them.
  assumptions assumed = {};

  [[nodiscard]] std::size_t device_count(const system& s) const noexcept { return devices ? devices : s.device.count; }
};

namespace detail {
inline double model_seconds(const system& s, const data_curation_workload& w, const curation_stage& o) {
  const double eff = o.efficiency > 0 ? o.efficiency : w.model_efficiency;
  return o.work.value() / (s.device.compute.value() * eff);
}
}  // namespace detail

//! The workload as model/coresidency.hpp takes it, on system `s`.
inline std::vector<model::curation_operator> curation_operators(const system& s, const data_curation_workload& w) {
  std::vector<model::curation_operator> ops;
  for (const auto& o : w.operators)
    ops.push_back({o.name, o.device, o.device ? detail::model_seconds(s, w, o) : o.cpu_seconds,
                   o.device ? o.memory : bytes{}, o.share});
  return ops;
}

inline model::curation_cluster curation_cluster_of(const system& s, const data_curation_workload& w) {
  return {w.cpu_workers, w.device_count(s), s.tiers.at(0).capacity, w.sharing_efficiency};
}

inline void validate(const data_curation_workload& w, const system& s) {
  trinity::detail::require(!w.name.empty(), "workload.name", "a workload needs a name");
  trinity::detail::require(!s.tiers.empty(), "system.tiers",
                           "the devices' own memory (tier 0) holds the models: give it");
  trinity::detail::require(w.device_count(s) >= 1 && w.device_count(s) <= 4096, "workload.devices",
                           "must be 1 to 4096");
  trinity::detail::require(w.cpu_workers >= 1, "workload.cpu_workers", "must be at least 1");
  trinity::detail::require(w.model_efficiency > 0 && w.model_efficiency <= 1, "workload.model_efficiency",
                           "must lie in (0, 1]");
  trinity::detail::require(w.sharing_efficiency > 0 && w.sharing_efficiency <= 1, "workload.sharing_efficiency",
                           "must lie in (0, 1]");
  trinity::detail::require(!w.operators.empty(), "workload.operators", "give at least one operator");
  std::size_t models = 0;
  std::set<std::string> names;
  for (std::size_t i = 0; i < w.operators.size(); ++i) {
    const auto& o = w.operators[i];
    const std::string at = "workload.operators[" + std::to_string(i) + "]";
    trinity::detail::require(!o.name.empty(), at + ".name", "name the operator");
    trinity::detail::require(names.insert(o.name).second, at + ".name", "\"" + o.name + "\" is named twice");
    trinity::detail::require(o.share > 0 && o.share <= 1, at + ".share", "must lie in (0, 1]");
    if (o.device) {
      ++models;
      detail::require_positive(o.work, at + ".flops");
      detail::require_positive(o.memory, at + ".memory");
      trinity::detail::require(o.efficiency >= 0 && o.efficiency <= 1, at + ".efficiency",
                               "must lie in [0, 1] (0: the workload's)");
      trinity::detail::require(o.memory <= s.tiers[0].capacity, at + ".memory",
                               to_string(o.memory) + " is more than a " + s.device.name + " holds (" +
                                   to_string(s.tiers[0].capacity) + "): the model cannot be placed");
    } else {
      detail::require_positive(o.cpu_seconds, at + ".seconds");
    }
  }
  trinity::detail::require(models >= 1, "workload.operators", "give at least one model (\"on\": \"device\")");
  trinity::detail::require(models <= 12, "workload.operators",
                           "at most 12 models (the placement search is exact over their sets)");
}

//! A plan: which models each device holds, and the budget per device it was found for.
struct data_curation_plan {
  bool one_per_device = false;  //!< the untraded plan
  bytes budget{};               //!< memory per device given to co-residency (the one-per-device plan: its largest)
  model::device_models holds;
  friend bool operator==(const data_curation_plan&, const data_curation_plan&) = default;
};

struct data_curation_cost {
  model::curation_rates rates;
  bytes memory{};  //!< the most any device holds
  int held = 0;    //!< models held, summed over the devices
  double dollars = 0;
  struct {
    seconds time{};   //!< device time per sample: 1 / samples per second
    joules energy{};  //!< the devices', per sample
  } total;
};

namespace detail {

inline std::vector<std::string> model_names(const data_curation_workload& w) {
  std::vector<std::string> n;
  for (const auto& o : w.operators)
    if (o.device) n.push_back(o.name);
  return n;
}
inline std::vector<bytes> model_memory(const data_curation_workload& w) {
  std::vector<bytes> m;
  for (const auto& o : w.operators)
    if (o.device) m.push_back(o.memory);
  return m;
}
inline std::string set_name(std::uint32_t set, const std::vector<std::string>& names) {
  std::string s;
  for (std::size_t j = 0; j < names.size(); ++j)
    if ((set >> j) & 1u) s += (s.empty() ? "" : " + ") + names[j];
  return s.empty() ? "nothing" : s;
}
inline bytes set_memory(std::uint32_t set, const std::vector<bytes>& mem) {
  bytes b{};
  for (std::size_t j = 0; j < mem.size(); ++j)
    if ((set >> j) & 1u) b += mem[j];
  return b;
}

//! One model per device, in whole numbers: each device past the first per model goes to the model whose
//! devices carry the least per unit of its work (the binding one).
inline model::device_models one_per_device(const std::vector<model::curation_operator>& ops, std::size_t devices) {
  std::vector<double> w;
  for (const auto& o : ops)
    if (o.gpu) w.push_back(o.share * o.seconds_per_sample);
  std::vector<std::size_t> n(w.size(), 1);
  for (std::size_t d = w.size(); d < devices; ++d) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < w.size(); ++j)
      if (static_cast<double>(n[j]) / w[j] < static_cast<double>(n[best]) / w[best]) best = j;
    ++n[best];
  }
  model::device_models holds;
  for (std::size_t j = 0; j < w.size(); ++j) holds.insert(holds.end(), n[j], std::uint32_t{1} << j);
  return holds;
}

}  // namespace detail

inline data_curation_cost price(const system& s, const data_curation_workload& w, const data_curation_plan& p) {
  const auto ops = curation_operators(s, w);
  const auto c = curation_cluster_of(s, w);
  data_curation_cost r;
  r.rates = model::rates(ops, c, p.holds);
  const auto mem = detail::model_memory(w);
  for (const auto h : p.holds) {
    r.memory = std::max(r.memory, detail::set_memory(h, mem));
    r.held += std::popcount(h);
  }
  const double D = static_cast<double>(c.devices);
  r.total.time = seconds{1.0 / r.rates.samples_per_second};
  r.total.energy = D * s.device.power * r.total.time;
  r.dollars = D * s.device.price_per_hour * r.total.time.value() / 3600.0;
  return r;
}

using data_curation_evaluated = candidate<data_curation_plan, data_curation_cost>;
using data_curation_result = result<data_curation_plan, data_curation_cost>;

//! What the baseline is: one model per device, or (fewer devices than models) the least memory per device.
inline std::string baseline_name(const data_curation_plan& p) {
  return p.one_per_device ? "one model per device" : "the least memory per device";
}

//! "5 devices hold caption; 3 hold aesthetic + flow + ocr + caption".
inline std::string describe(const data_curation_plan& p, const data_curation_workload& w) {
  const auto names = detail::model_names(w);
  std::map<std::uint32_t, std::size_t> count;
  for (const auto h : p.holds) ++count[h];
  std::vector<std::pair<std::size_t, std::uint32_t>> groups;
  for (const auto& [set, n] : count) groups.emplace_back(n, set);
  std::sort(groups.begin(), groups.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::string s = p.one_per_device ? "one model per device: " : "co-resident within " + to_string(p.budget) + ": ";
  for (std::size_t i = 0; i < groups.size(); ++i)
    s += (i ? "; " : "") + std::to_string(groups[i].first) + (groups[i].first == 1 ? " holds " : " hold ") +
         detail::set_name(groups[i].second, names);
  return s;
}

namespace detail {

inline bool all_models(std::uint32_t set, const data_curation_workload& w) {
  return set == (std::uint32_t{1} << model_names(w).size()) - 1;
}

inline std::string curation_binding(const data_curation_workload& w, const data_curation_evaluated& e) {
  const auto& r = e.cost.rates;
  const std::string busy = "the devices are busy " + pct(r.device_utilization);
  if (r.binding_models == 0)
    return "the CPU operators (" + std::to_string(w.cpu_workers) + " workers make " +
           units::detail::format_number(r.cpu_bound) + " samples/s): " + busy;
  if (all_models(r.binding_models, w))
    return "the devices themselves (" + units::detail::format_number(r.gpu_bound) +
           " samples/s): every model's work "
           "spreads over them, and " +
           busy;
  return "the devices holding " + set_name(r.binding_models, model_names(w)) + " (" +
         units::detail::format_number(r.gpu_bound) + " samples/s): " + busy;
}

struct data_curation_problem {
  // Which models each device holds, one per device or co-resident within a budget: one slot.
  struct coresidency {
    using spends = resources::memory;
    using saves = resources::time;
    static constexpr std::string_view name = "co-residency";
    static data_curation_plan& of(data_curation_plan& p) { return p; }
  };
  using slots = slot_list<coresidency>;
  using plan_type = data_curation_plan;
  using cost_type = data_curation_cost;
  static constexpr const char* time_word = "time per sample";

  const system& s;
  const data_curation_workload& w;
  const planner_options& o;
  std::vector<model::compressor_cost> none{};

  [[nodiscard]] const std::vector<model::compressor_cost>& codecs() const { return none; }

  //! Every budget per device at which the placement can change: the totals of the sets of models that fit
  //! in a device, from the largest model up.
  [[nodiscard]] std::vector<bytes> budgets() const {
    const auto mem = model_memory(w);
    const bytes largest = *std::max_element(mem.begin(), mem.end());
    std::set<double> totals;
    for (std::uint32_t set = 1; set < (std::uint32_t{1} << mem.size()); ++set) {
      const bytes b = set_memory(set, mem);
      if (b >= largest && b <= s.tiers[0].capacity) totals.insert(b.value());
    }
    std::vector<bytes> out;
    for (double b : totals) out.push_back(bytes{b});
    return out;
  }

  template <class F>
  void for_each_plan(F&& f) const {
    const auto ops = curation_operators(s, w);
    const auto c = curation_cluster_of(s, w);
    const auto mem = model_memory(w);
    if (c.devices >= mem.size()) {
      const auto holds = one_per_device(ops, c.devices);
      f(data_curation_plan{true, *std::max_element(mem.begin(), mem.end()), holds});
    }
    std::set<model::device_models> seen;
    for (const bytes b : budgets()) {
      auto holds = model::placement_for(ops, c, b);
      std::sort(holds.begin(), holds.end());
      if (seen.insert(holds).second) f(data_curation_plan{false, b, holds});
    }
  }
  [[nodiscard]] data_curation_cost price(const data_curation_plan& p) const { return plan::price(s, w, p); }
  [[nodiscard]] std::string check(const data_curation_plan&, const data_curation_cost&) const { return {}; }
  // With fewer devices than models there is no one-per-device plan; the least memory is then the untraded one.
  [[nodiscard]] bool is_baseline(const data_curation_plan& p) const {
    if (curation_cluster_of(s, w).devices >= model_memory(w).size()) return p.one_per_device;
    return p.budget == budgets().front();
  }
  // The objective, then less memory per device, then fewer models held.
  [[nodiscard]] bool better(const data_curation_evaluated& a, const data_curation_evaluated& b) const {
    const double sa = score(a.cost, o.objective), sb = score(b.cost, o.objective);
    if (sa < sb * (1 - 1e-9)) return true;
    if (sb < sa * (1 - 1e-9)) return false;
    return std::pair{a.cost.memory.value(), a.cost.held} < std::pair{b.cost.memory.value(), b.cost.held};
  }
  [[nodiscard]] std::array<double, 3> pareto_keys(const data_curation_cost& c) const {
    return {c.total.time.value(), c.total.energy.value(), c.memory.value()};
  }
  [[nodiscard]] std::string describe(const data_curation_plan& p) const { return plan::describe(p, w); }
  [[nodiscard]] std::string binding(const data_curation_evaluated& e) const { return curation_binding(w, e); }
  [[nodiscard]] std::vector<std::string> trades(const data_curation_result& r) const {
    const auto& c = r.chosen();
    const auto& b = r.candidates[r.baseline];
    std::vector<std::string> out;
    if (r.choice == r.baseline) {
      out.push_back("none: " + describe(b.plan) + " is already the best plan");
    } else {
      out.push_back(
          "device memory for device compute: " + to_string(c.cost.memory) + " per device where the baseline (" +
          baseline_name(b.plan) + ") held " + to_string(b.cost.memory) + "; the devices are busy " +
          pct(c.cost.rates.device_utilization) + " instead of " + pct(b.cost.rates.device_utilization) +
          ", samples/s " + units::detail::format_number(b.cost.rates.samples_per_second) + " -> " +
          units::detail::format_number(c.cost.rates.samples_per_second) + " (" +
          units::detail::format_number(c.cost.rates.samples_per_second / b.cost.rates.samples_per_second) + "x)");
    }
    // Where more memory stops helping: the least memory per device that reaches the best rate of all.
    const auto* least = &c;
    for (const auto& e : r.candidates)
      if (e.cost.rates.samples_per_second >= c.cost.rates.samples_per_second * (1 - 1e-9) &&
          e.cost.memory < least->cost.memory)
        least = &e;
    const auto binding = c.cost.rates.binding_models;
    const std::string why = binding == 0 ? "the CPU operators bind"
                            : all_models(binding, w)
                                ? "every device is busy with the models' work"
                                : "the devices holding " + set_name(binding, model_names(w)) + " are busy";
    out.push_back("more memory stops helping at " + to_string(least->cost.memory) + " per device (of " +
                  to_string(s.tiers[0].capacity) + "): " + why);
    if (w.sharing_efficiency < 1)
      out.push_back("a device holding several models keeps " + pct(w.sharing_efficiency) +
                    " of its compute (their interference, an input)");
    return out;
  }
  // The baseline, and the budgets next to the choice's.
  [[nodiscard]] bool neighbour(const data_curation_result& r, std::size_t i) const {
    const auto& p = r.candidates[i].plan;
    if (i == r.baseline) return true;
    if (p.one_per_device) return false;
    return i + 1 == r.choice || i == r.choice + 1;
  }
  [[noreturn]] void none_fits(const data_curation_result&) const {
    throw invalid_input("workload", "no plan fits");  // unreachable: every placement priced fits its devices
  }
  [[nodiscard]] std::string tie_note(const data_curation_evaluated& e, const data_curation_evaluated& chosen) const {
    return "as fast, holding " + to_string(e.cost.memory) + " per device where " + to_string(chosen.cost.memory) +
           " does";
  }
};

}  // namespace detail

//! Every placement priced (one model per device, and the best co-resident one for each budget per device),
//! the Pareto front, the fastest (ties: less memory per device, then fewer models held) and why.
inline data_curation_result plan_data_curation(const system& s, const data_curation_workload& w,
                                               const planner_options& o = {}) {
  validate(s);
  validate(w, s);
  detail::require_prices(s, o.objective);
  return solve(detail::data_curation_problem{s, w, o}, o);
}

namespace presets {

//! The T2V curation pipeline of the paper's Figure 11 (Open-Sora's, Zheng et al. 2024, which the paper
//! cites for it): scene detection and splitting on the CPU, then aesthetic scoring, optical flow, OCR and
//! captioning on the devices, each filter before captioning dropping some clips. The paper gives no
//! per-operator costs; each figure below is sourced or named as an assumption, and the pipeline runs on one
//! node of the system (its devices; 112 CPU workers, a DGX H100's cores).
inline data_curation_workload t2v_curation() {
  data_curation_workload w;
  w.name = "t2v-curation";
  w.cpu_workers = 112;          // NVIDIA DGX H100 data sheet: 2x Intel Xeon Platinum 8480C, 56 cores each
  w.model_efficiency = 0.4;     // assumption: batched vision encoders reach ~40% of dense bf16
  w.sharing_efficiency = 0.95;  // assumption: co-resident models (MPS) lose ~5% to interference
  w.operators = {
      {"scene-detect", false, 0.6, flops{}, 0, bytes{}, 1.0,
       "assumption: decode and PySceneDetect's content detector over a ~10 s 720p clip, 0.6 CPU-seconds"},
      {"split", false, 0.4, flops{}, 0, bytes{}, 1.0, "assumption: ffmpeg cuts and re-encodes a clip, 0.4 CPU-seconds"},
      {"aesthetic", true, 0, flops{3 * 81.1e9}, 0, bytes{2e9}, 1.0,
       "CLIP ViT-L/14 image tower, 81.1 GFLOPs per 224x224 image (OpenCLIP's model profile); 3 frames per clip "
       "and 2 GB resident (weights 0.6 GB in fp16 plus batch activations): assumptions"},
      {"optical-flow", true, 0, flops{1e12}, 0, bytes{3e9}, 0.6,
       "UniMatch flow over the clip's frame pairs: 1 TFLOP per clip and 3 GB resident, assumptions; 60% of clips "
       "pass the aesthetic filter (assumption)"},
      {"ocr", true, 0, flops{4e11}, 0, bytes{2e9}, 0.42,
       "DBNet++ (ResNet-50) text detection on 4 frames: 0.4 TFLOP per clip and 2 GB resident, assumptions; 70% "
       "pass the flow filter (assumption)"},
      {"caption", true, 0, flops{6.5e13}, 0.15, bytes{32e9}, 0.336,
       "a 13B video-language captioner (PLLaVA-13B, as Open-Sora used): 2 x 13e9 FLOPs x ~2,500 tokens per clip; "
       "26 GB of fp16 weights, 32 GB with its KV cache and activations; 15% efficiency since generation is "
       "memory-bound (assumption); 80% pass the OCR filter (assumption)"},
  };
  assume(w.assumed, "model_efficiency", w.model_efficiency);  // assumptions, as said above
  assume(w.assumed, "sharing_efficiency", w.sharing_efficiency);
  return w;
}

inline std::optional<data_curation_workload> find_data_curation(std::string_view name) {
  if (name == "t2v-curation") return t2v_curation();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
