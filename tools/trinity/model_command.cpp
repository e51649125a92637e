// trinity model frontier|deficit|cache|hetero: the paper's trade-off models evaluated from flags, with the
// explanation a reader needs to trust them. The flags become a question of reports/ (frontier.hpp, deficit.hpp,
// hetero.hpp, cache_sizing.hpp), which prints its answer as text or JSON.

#include "cli.hpp"

#include <trinity/model.hpp>
#include <trinity/plan/cxl_case_studies.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/reports/cache_sizing.hpp>
#include <trinity/reports/deficit.hpp>
#include <trinity/reports/frontier.hpp>
#include <trinity/reports/hetero.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>

#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace trinity::cli {

namespace {

// The answer to a question of reports/, as JSON or as text.
template <class Question>
void answer(const Question& q, bool as_json) {
  if (as_json)
    std::cout << reports::to_json(q).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  else
    reports::print(std::cout, q);
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
  answer(reports::frontier_question{f, at, from, to, px}, a.json);
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

  answer(reports::deficit_question{total, avail, n, k, sync, factor, link}, a.json);
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

  reports::hetero_question q{h, 0, 0};
  if (a.producers.empty() != a.consumers.empty())
    throw usage_error("give --producers and --consumers together, for the consumers' utilization");
  if (!a.producers.empty()) {
    q.producers = count_flag(a.producers, "--producers", 1, 1u << 24);
    q.consumers = count_flag(a.consumers, "--consumers", 1, 1u << 24);
  }
  answer(q, a.json);
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

reports::cache_question read_cache_question(const cache_args& a) {
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
  std::optional<reports::cache_fits> fits;
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
    fits = reports::cache_fits{model::fit_exponential_saturation(pts, entry), model::fit_power_law(pts)};
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
  return {cache, capacity, exp_curve, pow_curve, exp_origin, pow_origin, fits, h, h_origin, target};
}

void run_cache(const cache_args& a) { answer(read_cache_question(a), a.json); }

// ---- the CXL report's case studies ----------------------------------------------------------------

void run_cxl_cases(bool as_json) {
  const auto rows = plan::cxl_case_studies();
  double lo = 1e300, hi = 0;
  for (const auto& r : rows)
    if (r.phase.rfind("DLRM", 0) == 0) lo = std::min(lo, r.predicted), hi = std::max(hi, r.predicted);
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : rows)
      j.push_back({{"phase", r.phase},
                   {"reported", r.reported},
                   {"reported_at", r.reported_at},
                   {"predicted", r.predicted},
                   {"priced", r.priced}});
    std::cout << nlohmann::json{{"pool", "gb200-nvl72-cxl's cxl-capacity over CXL, against rdma_pool_access"},
                                {"phases", j}}
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << '\n';
    return;
  }
  std::cout
      << "The CXL report's case studies (section 5.2): each phase's time with the pool reached over RDMA, over its\n"
         "time over CXL (gb200-nvl72-cxl's cxl-capacity tier against plan::rdma_pool_access).\n\n";
  reports::table t({"phase", "the report", "trinity", "trinity / report", "what trinity priced"});
  for (const auto& r : rows)
    t.add({r.phase, units::detail::format_number(r.reported) + "x (" + r.reported_at + ")",
           units::detail::format_number(r.predicted) + "x", units::detail::format_number(r.predicted / r.reported),
           r.priced});
  t.print(std::cout);
  std::cout
      << "\nThe report's DLRM overall, 3.32x (L1647, L1659-1661), weighs its two phases by shares it does not give; "
         "trinity's\nlies between its two DLRM rows, " +
             units::detail::format_number(lo) + "x to " + units::detail::format_number(hi) + "x.\n";
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

  auto cases_json = std::make_shared<bool>(false);
  auto* k = model_cmd->add_subcommand("cxl-cases",
                                      "The CXL report's RAG and DLRM case studies: each phase over CXL against RDMA, "
                                      "priced by the library's models beside the report's speed-up");
  k->add_flag("--json", *cases_json, "Print JSON");
  k->callback([cases_json] { run_cxl_cases(*cases_json); });
}

}  // namespace trinity::cli
