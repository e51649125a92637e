// trinity model frontier|deficit|cache|hetero: the paper's trade-off models
// evaluated from flags, with the explanation a reader needs to trust them.

#include "cli.hpp"

#include <trinity/model.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>

#include <fstream>
#include <memory>
#include <optional>
#include <sstream>

namespace trinity::cli {

namespace {

using json = nlohmann::json;

std::string fixed(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// ---- frontier ------------------------------------------------------------------

struct frontier_args {
  std::vector<std::string> points;
  std::vector<std::string> compute;
  std::string from, to, pixels = "921600";
  bool json = false;
};

using video_frontier = model::frontier<flops, bits_per_pixel>;

video_frontier read_frontier(const frontier_args& a) {
  if (a.points.empty()) return model::paper_video_frontier();
  std::vector<video_frontier::point> pts;
  for (const auto& p : a.points) {
    const auto colon = p.find(':');
    if (colon == std::string::npos) throw bad_flag("--point", p, "expected COMPUTE:BANDWIDTH, e.g. 1e9:0.15");
    const flops c = quantity_flag<flops>(p.substr(0, colon), "--point");
    const bits_per_pixel b = quantity_flag<bits_per_pixel>(p.substr(colon + 1), "--point");
    pts.push_back({c, b});
  }
  try {
    return video_frontier(pts);
  } catch (const invalid_input& e) {
    throw usage_error("--point: " + e.problem() + " (points given: " + std::to_string(pts.size()) + ")");
  }
}

void run_frontier(const frontier_args& a) {
  const video_frontier f = read_frontier(a);
  const double px = number_flag(a.pixels, "--pixels", 1, 1e12, "a pixel count from 1 to 1e12");
  auto in_range = [&](const std::string& text, std::string_view flag) {
    const flops c = quantity_flag<flops>(text, flag);
    if (c < f.min_compute() || c > f.max_compute())
      throw bad_flag(flag, text,
                     "outside the measured range [" + to_string(f.min_compute()) + ", " + to_string(f.max_compute()) +
                         "]; the frontier is not extrapolated, add a --point there");
    return c;
  };
  std::vector<flops> at;
  for (const auto& c : a.compute) at.push_back(in_range(c, "--compute"));
  if (at.empty())
    for (const auto& p : f.points()) at.push_back(p.compute);
  const flops from = a.from.empty() ? f.min_compute() : in_range(a.from, "--from");
  const flops to = a.to.empty() ? f.max_compute() : in_range(a.to, "--to");

  const model::compute_for_bandwidth<> policy{f, pixels{px}};
  const auto trade = policy.price({from, to});
  const double compute_ratio = to / from;
  const double gain = f.compression_gain(from, to);
  const double mean_elasticity = compute_ratio == 1.0 ? 0.0 : -std::log(gain) / std::log(compute_ratio);

  if (a.json) {
    json out{{"model", "frontier"}, {"points", json::array()}, {"evaluations", json::array()}};
    for (const auto& p : f.points())
      out["points"].push_back({{"compute_flops", p.compute.value()}, {"bandwidth_bpp", p.bandwidth.value() * 8}});
    for (const auto c : at)
      out["evaluations"].push_back({{"compute_flops", c.value()},
                                    {"bandwidth_bpp", f.bandwidth_at(c).value() * 8},
                                    {"elasticity", f.elasticity(c)}});
    out["trade"] = {{"spends", "compute"},
                    {"saves", "bandwidth"},
                    {"from_flops", from.value()},
                    {"to_flops", to.value()},
                    {"compute_ratio", compute_ratio},
                    {"compression_gain", gain},
                    {"mean_elasticity", mean_elasticity},
                    {"pixels_per_frame", px},
                    {"bytes_per_frame_before", trade.before.bandwidth.value()},
                    {"bytes_per_frame_after", trade.after.bandwidth.value()},
                    {"spent_flops", trade.spent().value()},
                    {"saved_bytes_per_frame", trade.saved().value()}};
    std::cout << out.dump(2) << '\n';
    return;
  }
  std::cout << "Compute -> bandwidth: the frontier B*(Q0, C) for one quality target (paper §3.1.2)\n"
            << "  " << f.points().size() << " measured points, interpolated linearly in log-log, not extrapolated\n\n";
  table t({"decoder compute", "B*(Q0, C)", "elasticity d log B / d log C"});
  for (const auto c : at) t.add({to_string(c), to_string(f.bandwidth_at(c)), fixed(f.elasticity(c), 3)});
  t.print(std::cout);
  std::cout << "\nTrade: " << fixed(compute_ratio) << "x more decoder compute (" << to_string(from) << " -> "
            << to_string(to) << ") needs " << fixed(gain) << "x less bandwidth (" << to_string(f.bandwidth_at(from))
            << " -> " << to_string(f.bandwidth_at(to)) << ").\n"
            << "  per frame of " << fixed(px, 7) << " px: " << to_string(trade.before.bandwidth) << " -> "
            << to_string(trade.after.bandwidth) << "; spends " << to_string(trade.spent()) << ", saves "
            << to_string(trade.saved()) << " (" << to_string(flops{trade.spent().value() / trade.saved().value()})
            << " per byte saved)\n"
            << "  mean elasticity " << fixed(mean_elasticity, 3) << ": each 10x of compute divides bandwidth by "
            << fixed(std::pow(10.0, -mean_elasticity), 3) << "\n";
}

// ---- deficit -------------------------------------------------------------------

struct deficit_args {
  std::string total, avail, devices, k = "1", sync = "0B", allreduce = "ring", link;
  bool json = false;
};

void run_deficit(const deficit_args& a) {
  const bytes total = quantity_flag<bytes>(a.total, "--total");
  if (total < bytes{}) throw bad_flag("--total", a.total, "must not be negative; expected a size such as 400GB");
  const bytes avail = quantity_flag<bytes>(a.avail, "--avail");
  if (avail <= bytes{}) throw bad_flag("--avail", a.avail, "must be positive; expected a size such as 100GB");
  const std::size_t n = count_flag(a.devices, "--devices", 1, 1u << 24);
  const double k = number_flag(a.k, "--k", 0, 1e6, "bytes sent per byte of missing memory, a number >= 0");
  const bytes sync = quantity_flag<bytes>(a.sync, "--sync-bytes");
  if (sync < bytes{}) throw bad_flag("--sync-bytes", a.sync, "must not be negative");
  const double factor = a.allreduce == "ring"
                            ? model::ring_allreduce_factor(n)
                            : number_flag(a.allreduce, "--allreduce", 0, 1e6, "'ring' or a factor >= 0");
  std::optional<bytes_per_second> link;
  if (!a.link.empty()) {
    link = quantity_flag<bytes_per_second>(a.link, "--link-bandwidth");
    if (*link <= bytes_per_second{}) throw bad_flag("--link-bandwidth", a.link, "must be positive");
  }

  const bytes deficit = model::memory_deficit(total, avail, n);
  const bytes base = model::communication_cost(sync, factor, k, bytes{});
  const bytes comm = model::communication_cost(sync, factor, k, deficit);
  const auto trade = model::bandwidth_for_memory{k, sync, factor}.price({total, avail, n});
  const std::size_t needed = model::devices_to_fit(total, avail);

  if (a.json) {
    json out{{"model", "deficit"},
             {"total_bytes", total.value()},
             {"available_per_device_bytes", avail.value()},
             {"devices", n},
             {"k", k},
             {"allreduce_factor", factor},
             {"synchronized_state_bytes", sync.value()},
             {"deficit_bytes", deficit.value()},
             {"extra_traffic_bytes", (comm - base).value()},
             {"synchronization_traffic_bytes", base.value()},
             {"communication_bytes", comm.value()},
             {"devices_to_fit", needed},
             {"trade",
              {{"spends", "bandwidth"},
               {"saves", "memory"},
               {"spent_bytes", trade.spent().value()},
               {"saved_bytes", trade.saved().value()},
               {"memory_per_byte_sent", deficit > bytes{} && k > 0 ? json(trade.rate()) : json(nullptr)}}}};
    if (link) {
      out["link_bandwidth_bytes_per_second"] = link->value();
      out["extra_transfer_seconds"] = ((comm - base) / *link).value();
      out["communication_seconds"] = (comm / *link).value();
    }
    std::cout << out.dump(2) << '\n';
    return;
  }
  std::cout << "Bandwidth -> memory: the memory deficit and the traffic that replaces it (paper §4.1.2)\n"
            << "  the run needs M_total = " << to_string(total) << "; " << n << " device(s) x " << to_string(avail)
            << " hold " << to_string(avail * static_cast<double>(n)) << "\n"
            << "  deficit M_miss = max(0, M_total - N·M_avail) = " << to_string(deficit) << "\n"
            << "  extra traffic k·M_miss = " << fixed(k) << " x " << to_string(deficit) << " = "
            << to_string(comm - base) << " per iteration\n"
            << "  C_comm = T_allreduce·(P+G+O) + k·M_miss = " << fixed(factor, 3) << " x " << to_string(sync) << " + "
            << to_string(comm - base) << " = " << to_string(comm) << " per iteration\n";
  if (deficit > bytes{}) {
    std::cout << "Trade: " << to_string(trade.spent()) << " of traffic per iteration stands in for "
              << to_string(trade.saved()) << " of memory";
    if (k > 0) std::cout << " (" << fixed(trade.rate()) << " bytes of memory per byte sent)";
    std::cout << ".\n  Without it, " << needed << " devices of " << to_string(avail) << " would be needed.\n";
  } else {
    std::cout << "No trade needed: the devices hold everything (" << needed << " would suffice).\n";
  }
  if (link)
    std::cout << "  over " << to_string(*link) << ": " << to_string((comm - base) / *link)
              << " of extra transfer per iteration, " << to_string(comm / *link) << " in all\n";
}

// ---- hetero --------------------------------------------------------------------

struct hetero_args {
  std::string link, streams, cap, sample, consume, produce, node_devices, encode_high, encode_low, producers, consumers;
  bool json = false;
};

void run_hetero(const hetero_args& a) {
  auto h = model::presets::wan22_t2v();
  if (!a.link.empty()) h.link.bandwidth = quantity_flag<bytes_per_second>(a.link, "--link-bandwidth");
  if (h.link.bandwidth <= bytes_per_second{})
    throw bad_flag("--link-bandwidth", a.link, "must be positive, e.g. 10Gbps");
  if (!a.streams.empty()) h.link.streams = count_flag(a.streams, "--streams", 1, 1u << 16);
  if (!a.cap.empty()) h.link.stream_cap = quantity_flag<bytes_per_second>(a.cap, "--stream-cap");
  if (h.link.stream_cap < bytes_per_second{}) throw bad_flag("--stream-cap", a.cap, "must be 0 (no cap) or positive");
  if (!a.sample.empty()) h.phase.sample = quantity_flag<bytes>(a.sample, "--sample");
  if (h.phase.sample <= bytes{}) throw bad_flag("--sample", a.sample, "must be a positive size, e.g. 7MB");
  const auto rate = [](const std::string& text, const char* flag, double fallback) {
    return text.empty() ? fallback : number_flag(text, flag, 1e-9, 1e18, "a positive rate");
  };
  h.phase.consume_per_second = rate(a.consume, "--consume", h.phase.consume_per_second);
  h.phase.produce_per_second = rate(a.produce, "--produce", h.phase.produce_per_second);
  h.encode_high = rate(a.encode_high, "--encode-high", h.encode_high);
  h.encode_low = rate(a.encode_low, "--encode-low", h.encode_low);
  if (!a.node_devices.empty()) h.devices_per_node = count_flag(a.node_devices, "--devices-per-node", 1, 1u << 16);

  const auto carried = model::carried(h.link);
  const auto fill = model::streams_to_fill(h.link.bandwidth, h.link.stream_cap);
  const double node_rate = static_cast<double>(h.devices_per_node) * h.phase.consume_per_second;
  const bytes_per_second node_bytes{node_rate * h.phase.sample.value()};
  const auto nodes = model::nodes_supported(h.link, node_rate, h.phase.sample);
  auto filled = h.link;
  filled.streams = std::max(filled.streams, fill);
  const auto nodes_filled = model::nodes_supported(filled, node_rate, h.phase.sample);
  const double ratio = model::producers_per_consumer_freed(h.encode_high, h.encode_low);
  const std::size_t whole = model::whole_producers_per_consumer_freed(h.encode_high, h.encode_low);
  std::optional<double> utilization;
  std::size_t producers = 0, consumers = 0;
  if (a.producers.empty() != a.consumers.empty())
    throw usage_error("give --producers and --consumers together, for the consumers' utilization");
  if (!a.producers.empty()) {
    producers = count_flag(a.producers, "--producers", 1, 1u << 24);
    consumers = count_flag(a.consumers, "--consumers", 1, 1u << 24);
    utilization = model::consumer_utilization(producers, consumers, h.phase, h.link);
  }
  if (a.json) {
    json out{{"model", "hetero"},
             {"link_bytes_per_second", h.link.bandwidth.value()},
             {"streams", h.link.streams},
             {"stream_cap_bytes_per_second", h.link.stream_cap.value()},
             {"carried_bytes_per_second", carried.value()},
             {"streams_to_fill_link", fill},
             {"sample_bytes", h.phase.sample.value()},
             {"node_bytes_per_second", node_bytes.value()},
             {"nodes_supported", nodes},
             {"nodes_supported_with_streams_to_fill", nodes_filled},
             {"producers_per_consumer_freed", ratio},
             {"producers_per_consumer_freed_whole", whole}};
    if (utilization) {
      out["producers"] = producers;
      out["consumers"] = consumers;
      out["consumer_utilization"] = *utilization;
      out["bubble_fraction"] = 1 - *utilization;
    }
    std::cout << out.dump(2) << '\n';
    return;
  }
  std::cout << "Heterogeneous training over a message queue (paper §4.2): producers encode, consumers train\n"
            << "  the streams carry min(link, N x cap) = min(" << to_string(h.link.bandwidth) << ", " << h.link.streams
            << " x " << to_string(h.link.stream_cap) << ") = " << to_string(carried) << "; " << fill
            << " streams fill the link\n"
            << "  a consumer node takes " << h.devices_per_node << " x " << fixed(h.phase.consume_per_second)
            << " samples/s x " << to_string(h.phase.sample) << " = " << to_string(node_bytes) << ": these streams feed "
            << nodes << " node(s), " << fill << " streams feed " << nodes_filled << "\n"
            << "  encoding moved off the consumers: e_high / e_low = " << fixed(ratio, 3) << ", so " << whole
            << " producer devices stand in for each consumer device freed\n";
  if (utilization)
    std::cout << "  " << producers << " producers, " << consumers << " consumers: utilization "
              << fixed(*utilization, 3) << ", bubble " << fixed(1 - *utilization, 3) << "\n";
}

// ---- cache ---------------------------------------------------------------------

struct cache_args {
  std::string steps, step_flops, reuse_depth, entry_size, capacity, hit_rate, beta, kappa, gamma, points_file,
      target_saving;
  bool json = false;
};

std::vector<model::capacity_point> read_points(const std::string& path) {
  if (const auto problem = trinity::detail::input_file_problem(path)) throw bad_flag("--points", path, *problem);
  std::istringstream in(trinity::detail::read_input_file(path, trinity::detail::max_json_bytes));
  std::vector<model::capacity_point> pts;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    const auto comma = line.find(',');
    const std::string where = path + ":" + std::to_string(n);
    if (comma == std::string::npos) throw bad_flag("--points", where, "expected 'capacity,hit_rate', e.g. 10GB,0.42");
    const std::string cap = line.substr(0, comma), rate = line.substr(comma + 1);
    if (pts.empty() && (cap == "capacity" || cap == "capacity_bytes")) continue;  // a header line
    try {
      const bytes c = units::parse<bytes>(cap, "capacity");
      const double h = number_flag(rate, "hit_rate", 0, 1, "a hit rate in [0, 1)");
      if (c <= bytes{}) throw usage_error("capacity must be positive");
      if (h >= 1.0) throw usage_error("hit_rate must lie in [0, 1)");
      pts.push_back({c, h});
    } catch (const std::exception& e) {
      throw bad_flag("--points", where, e.what());
    }
  }
  if (pts.size() < 2) throw bad_flag("--points", path, "needs at least two measured points to fit both families");
  return pts;
}

// Both families fitted to one file of points; text and JSON are both drawn from it.
struct fitted {
  model::fit_result<model::exponential_saturation> exponential;
  model::fit_result<model::power_law> power;

  [[nodiscard]] bool power_law_better() const { return power.rmse < exponential.rmse; }
  [[nodiscard]] std::string better() const { return power_law_better() ? "power-law" : "exponential-saturation"; }
  [[nodiscard]] json to_json() const {
    return {
        {"points", exponential.points},
        {"exponential_saturation",
         {{"beta", exponential.model.beta}, {"rmse", exponential.rmse}, {"max_abs_error", exponential.max_abs_error}}},
        {"power_law",
         {{"kappa_per_gb", power.model.kappa.value() * 1e9},
          {"gamma", power.model.gamma},
          {"rmse", power.rmse},
          {"max_abs_error", power.max_abs_error}}},
        {"better", better()}};
  }
};

json curve_json(const model::diffusion_cache& c, const auto& h, bytes capacity) {
  return {{"hit_rate_at_capacity", h(capacity)},
          {"expected_cost_flops", model::expected_cost(c, h, capacity).value()},
          {"marginal_flops_per_byte", model::marginal_cost(c, h, capacity).value()}};
}

// What `trinity model cache` was asked, checked: the cache, its capacity, the hit-rate curves given or fitted, the
// hit rate at the capacity and where it came from, and the saving to size for.
struct cache_question {
  std::size_t steps, depth;
  flops step;
  bytes entry, capacity;
  model::diffusion_cache cache;
  std::optional<model::exponential_saturation> exp_curve;
  std::optional<model::power_law> pow_curve;
  std::string exp_origin, pow_origin;
  std::optional<fitted> fits;
  double h;
  std::string h_origin;
  std::optional<flops> target;
};

cache_question read_cache_question(const cache_args& a) {
  const std::size_t steps = count_flag(a.steps, "--steps", 1, 1000000);
  const flops step = quantity_flag<flops>(a.step_flops, "--step-flops");
  if (step <= flops{}) throw bad_flag("--step-flops", a.step_flops, "must be positive; expected FLOPs such as 1e9");
  if (a.reuse_depth.empty()) throw usage_error("--reuse-depth is required: the steps a hit skips, 0 to --steps");
  std::size_t depth = 0;
  try {
    depth = count_flag(a.reuse_depth, "--reuse-depth", 0, steps);
  } catch (const usage_error&) {
    throw bad_flag("--reuse-depth", a.reuse_depth,
                   "expected a whole number from 0 to " + std::to_string(steps) +
                       " (--steps): a hit cannot skip more steps than a request runs");
  }
  const bytes entry = quantity_flag<bytes>(a.entry_size, "--entry-size");
  if (entry <= bytes{}) throw bad_flag("--entry-size", a.entry_size, "must be positive; expected a size such as 2GB");
  const bytes capacity = quantity_flag<bytes>(a.capacity, "--capacity");
  if (capacity <= bytes{}) throw bad_flag("--capacity", a.capacity, "must be positive; expected a size such as 10GB");

  const model::diffusion_cache cache{steps, step, depth, entry};

  std::optional<model::exponential_saturation> exp_curve;
  std::optional<model::power_law> pow_curve;
  std::string exp_origin, pow_origin;
  std::optional<fitted> fits;
  if (!a.beta.empty()) {
    exp_curve = model::exponential_saturation{number_flag(a.beta, "--beta", 1e-12, 1e12, "a number > 0"), entry};
    exp_origin = "given";
  }
  if (!a.kappa.empty() || !a.gamma.empty()) {
    if (a.kappa.empty() || a.gamma.empty()) throw usage_error("--kappa and --gamma go together: give both");
    const double kappa_per_gb = number_flag(a.kappa, "--kappa", 1e-12, 1e12, "a number > 0, per GB");
    pow_curve =
        model::power_law{per_byte{kappa_per_gb / 1e9}, number_flag(a.gamma, "--gamma", 1e-9, 1e6, "a number > 0")};
    pow_origin = "given";
  }
  if (!a.points_file.empty()) {
    const auto pts = read_points(a.points_file);
    fits = fitted{model::fit_exponential_saturation(pts, entry), model::fit_power_law(pts)};
    if (!exp_curve) {
      exp_curve = fits->exponential.model;
      exp_origin = "fit";
    }
    if (!pow_curve) {
      pow_curve = fits->power.model;
      pow_origin = "fit";
    }
  }

  double h = 0;
  std::string h_origin;
  if (!a.hit_rate.empty()) {
    h = number_flag(a.hit_rate, "--hit-rate", 0, 1, "a hit rate in [0, 1]");
    h_origin = "given";
    if (!exp_curve && h < 1.0 && h > 0.0) {
      exp_curve = model::exponential_saturation::through(capacity, h, entry);
      exp_origin = "through the given hit rate";
    }
  } else if (fits) {
    const bool pow_better = fits->power_law_better();
    h = pow_better ? (*pow_curve)(capacity) : (*exp_curve)(capacity);
    h_origin = std::string("the better fit (") + (pow_better ? "power law" : "exponential saturation") + ")";
  } else if (exp_curve) {
    h = (*exp_curve)(capacity);
    h_origin = "the exponential curve";
  } else if (pow_curve) {
    h = (*pow_curve)(capacity);
    h_origin = "the power law";
  } else {
    throw usage_error("--hit-rate is required unless --points, --beta or --kappa/--gamma give a hit-rate curve");
  }

  std::optional<flops> target;
  if (!a.target_saving.empty()) {
    target = quantity_flag<flops>(a.target_saving, "--target-saving");
    if (*target < flops{} || *target >= cache.saved_per_hit())
      throw bad_flag("--target-saving", a.target_saving,
                     "expected FLOPs in [0, " + to_string(cache.saved_per_hit()) +
                         "): below the saving of a certain hit, r·c_step");
  }
  return {steps,     depth,      step,       entry, capacity, cache,    exp_curve,
          pow_curve, exp_origin, pow_origin, fits,  h,        h_origin, target};
}

void print_cache_json(const cache_question& q) {
  const auto& [steps, depth, step, entry, capacity, cache, exp_curve, pow_curve, exp_origin, pow_origin, fits, h,
               h_origin, target] = q;
  const flops saved = cache.saved_per_request(h);
  const flops_per_byte rate = cache.average_benefit(capacity, h);
  const auto trade = model::memory_for_compute{cache}.price({capacity, h});

  json out{{"model", "cache"},
           {"steps", steps},
           {"step_flops", step.value()},
           {"reuse_depth", depth},
           {"entry_size_bytes", entry.value()},
           {"capacity_bytes", capacity.value()},
           {"full_cost_flops", cache.full_cost().value()},
           {"saved_per_hit_flops", cache.saved_per_hit().value()},
           {"entries", cache.entries(capacity)},
           {"hit_rate", h},
           {"hit_rate_from", h_origin},
           {"saved_flops_per_request", saved.value()},
           {"expected_cost_flops", cache.expected_cost(h).value()},
           {"average_flops_saved_per_byte", rate.value()},
           {"trade",
            {{"spends", "memory"},
             {"saves", "compute"},
             {"spent_bytes", trade.spent().value()},
             {"saved_flops", trade.saved().value()}}}};
  if (exp_curve) {
    out["exponential_saturation"] = curve_json(cache, *exp_curve, capacity);
    out["exponential_saturation"]["beta"] = exp_curve->beta;
    out["exponential_saturation"]["from"] = exp_origin;
    if (target)
      out["exponential_saturation"]["capacity_for_target_bytes"] =
          model::memory_for_saving(cache, *exp_curve, *target).value();
  }
  if (pow_curve) {
    out["power_law"] = curve_json(cache, *pow_curve, capacity);
    out["power_law"]["kappa_per_gb"] = pow_curve->kappa.value() * 1e9;
    out["power_law"]["gamma"] = pow_curve->gamma;
    out["power_law"]["from"] = pow_origin;
    if (target)
      out["power_law"]["capacity_for_target_bytes"] = model::memory_for_saving(cache, *pow_curve, *target).value();
  }
  if (fits) out["fits"] = fits->to_json();
  if (target) out["target_saving_flops"] = target->value();
  std::cout << out.dump(2) << '\n';
}

void print_cache_text(const cache_question& q) {
  const auto& [steps, depth, step, entry, capacity, cache, exp_curve, pow_curve, exp_origin, pow_origin, fits, h,
               h_origin, target] = q;
  const flops saved = cache.saved_per_request(h);
  const flops_per_byte rate = cache.average_benefit(capacity, h);
  const auto trade = model::memory_for_compute{cache}.price({capacity, h});

  std::cout << "Memory -> compute: an approximate cache of diffusion latents (paper §5.1.2)\n"
            << "  a full generation costs C_full = " << steps << " steps x " << to_string(step) << " = "
            << to_string(cache.full_cost()) << "\n"
            << "  a hit at reuse depth r = " << depth << " skips c_saved(r) = " << to_string(cache.saved_per_hit())
            << "\n"
            << "  capacity M = " << to_string(capacity) << " holds N(M) = floor(M / s_e) = " << cache.entries(capacity)
            << " entries of " << to_string(entry) << "\n"
            << "  hit rate h = " << fixed(h) << " (" << h_origin << ")\n"
            << "  saved per request h·c_saved = " << to_string(saved)
            << "; E[C] = " << to_string(cache.expected_cost(h)) << " (" << fixed(100.0 * (saved / cache.full_cost()), 3)
            << "% less)\n"
            << "Trade: " << to_string(trade.spent()) << " of memory saves " << to_string(trade.saved())
            << " per request: " << to_string(flops{rate.value() * 1e9}) << " per GB";
  if (rate > flops_per_byte{})
    std::cout << ", i.e. every " << to_string(bytes{2e9 / rate.value()}) << " of memory yields 2 GFLOP";
  std::cout << ".\n";
  auto describe = [&](std::string_view name, const auto& curve, const std::string& origin, const std::string& params) {
    std::cout << "  " << name << " (" << origin << ", " << params << "): h(M) = " << fixed(curve(capacity))
              << ", marginal dE/dM = " << to_string(flops{model::marginal_cost(cache, curve, capacity).value() * 1e9})
              << " per GB";
    if (target)
      std::cout << "; saving " << to_string(*target) << " per request needs "
                << to_string(model::memory_for_saving(cache, curve, *target));
    std::cout << "\n";
  };
  if (exp_curve) describe("exponential saturation", *exp_curve, exp_origin, "beta = " + fixed(exp_curve->beta));
  if (pow_curve)
    describe("power law", *pow_curve, pow_origin,
             "kappa = " + fixed(pow_curve->kappa.value() * 1e9) + "/GB, gamma = " + fixed(pow_curve->gamma));
  if (fits) {
    const auto& e = fits->exponential;
    const auto& p = fits->power;
    std::cout << "\nFits to " << e.points << " measured points:\n";
    table t({"family", "parameters", "rmse", "max |error|"});
    t.add({"exponential saturation", "beta = " + fixed(e.model.beta), fixed(e.rmse), fixed(e.max_abs_error)});
    t.add({"power law", "kappa = " + fixed(p.model.kappa.value() * 1e9) + "/GB, gamma = " + fixed(p.model.gamma),
           fixed(p.rmse), fixed(p.max_abs_error)});
    t.print(std::cout);
    std::cout << "better fit: " << fits->better() << "\n";
  }
}

void run_cache(const cache_args& a) {
  const auto q = read_cache_question(a);
  if (a.json)
    print_cache_json(q);
  else
    print_cache_text(q);
}

}  // namespace

void register_model(CLI::App& app) {
  auto* model_cmd = app.add_subcommand("model", "Evaluate the paper's three trade-off models");
  model_cmd->require_subcommand(1);

  auto fa = std::make_shared<frontier_args>();
  auto* f = model_cmd->add_subcommand("frontier", "Compute -> bandwidth: B*(Q0, C) through measured points");
  f->add_option("--point", fa->points,
                "COMPUTE:BANDWIDTH in FLOPs and bits per pixel, repeated, rising compute "
                "(default: the paper's 1e9:0.15 1.4e10:0.075 1e11:0.0375)")
      ->type_name("COMPUTE:BPP");
  f->add_option("--compute", fa->compute, "Decoder compute to evaluate B* at, repeated (default: the points)")
      ->type_name("FLOPS");
  f->add_option("--from", fa->from, "Compute before the trade (default: the least measured)")->type_name("FLOPS");
  f->add_option("--to", fa->to, "Compute after the trade (default: the most measured)")->type_name("FLOPS");
  f->add_option("--pixels", fa->pixels, "Pixels per frame, to price bytes per frame (default 921600, 720p)")
      ->type_name("COUNT");
  f->add_flag("--json", fa->json, "Print JSON");
  f->callback([fa] { run_frontier(*fa); });

  auto da = std::make_shared<deficit_args>();
  auto* d = model_cmd->add_subcommand("deficit", "Bandwidth -> memory: the memory deficit and its traffic");
  d->add_option("--total", da->total, "Memory the run needs, M_total (e.g. 400GB)")->type_name("SIZE")->required();
  d->add_option("--avail", da->avail, "Memory per device, M_avail (e.g. 100GB)")->type_name("SIZE")->required();
  d->add_option("--devices", da->devices, "Devices, N >= 1")->type_name("COUNT")->required();
  d->add_option("--k", da->k, "Bytes sent per byte of missing memory (default 1)")->type_name("NUMBER");
  d->add_option("--sync-bytes", da->sync, "State all-reduced every iteration, P+G+O (default 0B)")->type_name("SIZE");
  d->add_option("--allreduce", da->allreduce, "T_allreduce: 'ring' for 2(N-1)/N (default) or a factor")
      ->type_name("ring|NUMBER");
  d->add_option("--link-bandwidth", da->link, "Link bandwidth, to turn traffic into time (e.g. 400Gbps)")
      ->type_name("RATE");
  d->add_flag("--json", da->json, "Print JSON");
  d->callback([da] { run_deficit(*da); });

  auto ha = std::make_shared<hetero_args>();
  auto* h = model_cmd->add_subcommand("hetero",
                                      "Bandwidth -> memory across clusters: producers, streams and consumers "
                                      "(defaults: the paper's WAN2.2 run, model/hetero.hpp)");
  h->add_option("--link-bandwidth", ha->link, "The inter-cluster link (default 10Gbps)")->type_name("RATE");
  h->add_option("--streams", ha->streams, "Parallel streams over it (default 1)")->type_name("COUNT");
  h->add_option("--stream-cap", ha->cap, "One stream's most, 0 for none (default 50MB/s)")->type_name("RATE");
  h->add_option("--sample", ha->sample, "Bytes of one produced sample (default 7.096MB, a Wan2.2 720P latent)")
      ->type_name("SIZE");
  h->add_option("--consume", ha->consume, "Samples per second one consumer device trains on (default 1)")
      ->type_name("RATE");
  h->add_option("--produce", ha->produce, "Samples per second one producer device makes (default 1)")
      ->type_name("RATE");
  h->add_option("--devices-per-node", ha->node_devices, "Consumer devices per node (default 8)")->type_name("COUNT");
  h->add_option("--encode-high", ha->encode_high,
                "Encoding rate of a consumer-class device, any unit (default 3.35e12)")
      ->type_name("NUMBER");
  h->add_option("--encode-low", ha->encode_low, "Encoding rate of a producer-class device, same unit (default 8.64e11)")
      ->type_name("NUMBER");
  h->add_option("--producers", ha->producers, "Producer devices, for the consumers' utilization")->type_name("COUNT");
  h->add_option("--consumers", ha->consumers, "Consumer devices, for the consumers' utilization")->type_name("COUNT");
  h->add_flag("--json", ha->json, "Print JSON");
  h->callback([ha] { run_hetero(*ha); });

  auto ca = std::make_shared<cache_args>();
  auto* c = model_cmd->add_subcommand("cache", "Memory -> compute: an approximate cache of diffusion latents");
  c->add_option("--steps", ca->steps, "Denoising steps per generation, S >= 1")->type_name("COUNT")->required();
  c->add_option("--step-flops", ca->step_flops, "FLOPs per step, c_step (e.g. 1e9)")->type_name("FLOPS")->required();
  c->add_option("--reuse-depth", ca->reuse_depth, "Steps a hit skips, r in [0, S]")->type_name("COUNT")->required();
  c->add_option("--entry-size", ca->entry_size, "Bytes per cache entry, s_e (e.g. 2GB)")->type_name("SIZE")->required();
  c->add_option("--capacity", ca->capacity, "Cache capacity M (e.g. 10GB)")->type_name("SIZE")->required();
  c->add_option("--hit-rate", ca->hit_rate, "Measured hit rate at this capacity, in [0, 1]")->type_name("FRACTION");
  c->add_option("--beta", ca->beta, "Exponential saturation parameter beta > 0")->type_name("NUMBER");
  c->add_option("--kappa", ca->kappa, "Power-law kappa > 0, per GB")->type_name("PER_GB");
  c->add_option("--gamma", ca->gamma, "Power-law gamma > 0")->type_name("NUMBER");
  c->add_option("--points", ca->points_file, "CSV of measured 'capacity,hit_rate' lines to fit both families to")
      ->type_name("FILE");
  c->add_option("--target-saving", ca->target_saving, "FLOPs per request to save: prints the memory it needs")
      ->type_name("FLOPS");
  c->add_flag("--json", ca->json, "Print JSON");
  c->callback([ca] { run_cache(*ca); });
}

}  // namespace trinity::cli
