// trinity cache: memory -> compute, measured. `replay` runs a request trace
// through the approximate cache at several capacities (and latent sizes),
// prints the hit-rate curve, fits both hit-rate families of the paper
// (§5.1.2) and draws the curve; `gen-trace` writes a synthetic trace.
// Semantics: include/trinity/cache/replay.hpp and docs/cache.md; what is
// printed: reports/cache_replay.hpp and reports/block_replay.hpp.

#include "cli.hpp"

#include <trinity/cache/flat_index.hpp>
#include <trinity/cache/block_replay.hpp>
#include <trinity/cache/hnsw/hnsw_index.hpp>
#include <trinity/cache/replay.hpp>
#include <trinity/cache/trace.hpp>
#include <trinity/io/block_trace.hpp>
#include <trinity/model/fit.hpp>
#include <trinity/model/transformer.hpp>
#include <trinity/reports/block_replay.hpp>
#include <trinity/reports/cache_replay.hpp>
#include <trinity/units/format.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <fstream>
#include <memory>
#include <sstream>

namespace trinity::cli {
namespace {

using reports::fixed;

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::vector<bytes> size_list(const std::vector<std::string>& given, std::string_view flag) {
  std::vector<bytes> out;
  for (const auto& g : given)
    for (const auto& item : split(g)) {
      const bytes b = quantity_flag<bytes>(item, flag);
      if (b <= bytes{}) throw bad_flag(flag, item, "must be a positive size, e.g. 10GB");
      out.push_back(b);
    }
  if (out.empty()) throw usage_error(std::string(flag) + " needs at least one size, e.g. 1GB,10GB,100GB");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

struct replay_args {
  std::string trace, embeddings, warmup = "0.2", index = "flat", eviction = "lru", steps = "50", step_flops = "1e9",
                                 plot, ef = "64", points_out, format = "csv", horizon = "1000", block_tokens = "512";
  // Llama-3-70B's KV per token in bf16 (model::shapes::llama3_70b, from Meta's config.json).
  std::string kv_per_token =
      std::to_string(static_cast<long long>(model::kv_bytes_per_token(model::shapes::llama3_70b, 2).value())) + "B";
  std::string system;  // mooncake: the system whose tiers below the device a tiered replay spills to
  std::vector<std::string> capacities, latent_sizes, capacity_blocks, tier_blocks;
  bool json = false;
  CLI::App* command = nullptr;  // to ask which flags were given
};

template <class Eviction>
std::vector<cache::replay_result> run_curve(const replay_args& a, const cache::embedding_matrix& e,
                                            const std::vector<cache::request>& trace, const std::vector<bytes>& caps,
                                            cache::replay_options o, std::size_t ef) {
  std::vector<cache::replay_result> out;
  for (std::size_t i = 0; i < caps.size(); ++i) {
    std::cerr << "trinity cache replay: " << trace.size() << " requests, latent " << to_string(o.latent_size)
              << ", capacity " << to_string(caps[i]) << " (" << i + 1 << "/" << caps.size() << ")\n";
    o.capacity = caps[i];
    const auto replay_with = [&](auto index) {
      cache::approximate_cache<decltype(index), Eviction> c(std::move(index), {caps[i], o.step_cost});
      return cache::replay(c, e, trace, o);
    };
    out.push_back(a.index == "hnsw" ? replay_with(cache::hnsw_index(e.dimension, {.ef_search = ef}))
                                    : replay_with(cache::flat_index(e.dimension)));
  }
  return out;
}

// Flags of the other format are refused, not ignored.
void refuse_flags(const replay_args& a, std::initializer_list<const char*> flags, const char* format) {
  for (const char* f : flags)
    if (a.command->count(f)) throw usage_error(std::string(f) + " does not apply to --format " + format + "; drop it");
}

void run_replay(const replay_args& a) {
  if (a.format != "csv") throw bad_flag("--format", a.format, "expected csv or mooncake");
  refuse_flags(a, {"--capacity-blocks", "--kv-bytes-per-token", "--block-tokens", "--shared-horizon"}, "csv");
  for (const char* f : {"--embeddings", "--capacity", "--latent-size"})
    if (!a.command->count(f)) throw usage_error(std::string(f) + " is required with --format csv");
  const double warmup = number_flag(a.warmup, "--warmup", 0, 0.99, "a share of the requests from 0 to 0.99");
  const auto steps = static_cast<int>(count_flag(a.steps, "--steps", 1, 100000));
  const double step_flops = number_flag(a.step_flops, "--step-flops", 0, 1e30, "a number of FLOPs, e.g. 1e9");
  const auto ef = count_flag(a.ef, "--ef", 1, 100000);
  if (a.index != "flat" && a.index != "hnsw") throw bad_flag("--index", a.index, "expected flat or hnsw");
  if (a.eviction != "lru" && a.eviction != "lfu" && a.eviction != "benefit-aware")
    throw bad_flag("--eviction", a.eviction, "expected lru, lfu or benefit-aware");
  const auto caps = size_list(a.capacities, "--capacity");
  const auto latents = size_list(a.latent_sizes, "--latent-size");
  if (!a.points_out.empty() && latents.size() != 1)
    throw bad_flag("--points-out", a.points_out, "writes one curve: give a single --latent-size with it");
  if (!a.points_out.empty()) trinity::detail::require_output_file("--points-out", a.points_out);
  if (!a.plot.empty()) trinity::detail::require_output_file("--plot", a.plot);
  cache::embedding_matrix e;
  std::vector<cache::request> trace;
  try {
    e = cache::read_fvecs(a.embeddings);
  } catch (const invalid_input& x) {
    throw bad_flag("--embeddings", a.embeddings, x.problem());
  }
  try {
    trace = cache::read_trace(a.trace, e.rows());
  } catch (const invalid_input& x) {
    throw usage_error(std::string("--trace ") + x.what());
  }
  const cache::runtime_reuse reuse;
  if (steps < reuse.deepest())
    throw bad_flag(
        "--steps", a.steps,
        "a request must run at least the table's deepest reuse (" + std::to_string(reuse.deepest()) + " steps)");

  reports::cache_replay_report r{a.trace,     a.embeddings, a.index, a.eviction, a.plot, trace.size(),
                                 e.dimension, warmup,       steps,   step_flops, {}};
  for (const bytes latent : latents) {
    const cache::replay_options o{
        .latent_size = latent, .step_cost = flops{step_flops}, .steps = steps, .warmup = warmup};
    reports::replay_curve c{latent, {}, {}};
    if (a.eviction == "lfu")
      c.points = run_curve<cache::lfu>(a, e, trace, caps, o, ef);
    else if (a.eviction == "benefit-aware")
      c.points = run_curve<cache::benefit_aware>(a, e, trace, caps, o, ef);
    else
      c.points = run_curve<cache::lru>(a, e, trace, caps, o, ef);
    std::vector<model::capacity_point> pts;
    for (const auto& p : c.points)
      if (p.hit_rate < 1.0) pts.push_back({p.capacity, p.hit_rate});
    c.fits = reports::hit_rate_fits::of(pts, c.points.front().entry_size);
    r.curves.push_back(std::move(c));
  }
  if (!a.plot.empty()) reports::draw(r);
  if (!a.points_out.empty()) {
    // The measured curve in the format `trinity model cache --points` reads, to size a cache from it.
    trinity::detail::output_file pts("--points-out", a.points_out);
    for (const auto& p : r.curves.front().points) pts.stream() << p.capacity.value() << "B," << p.hit_rate << '\n';
    pts.commit();
  }

  if (a.json)
    std::cout << reports::to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  else
    reports::print(std::cout, r);
}

// ---- --format mooncake: block-hashed requests through the exact prefix cache ------------------------------

cache::prefix_eviction eviction_named(const std::string& name, std::uint64_t horizon) {
  if (name == "lru") return {cache::prefix_eviction_policy::lru, horizon};
  if (name == "lfu") return {cache::prefix_eviction_policy::lfu, horizon};
  if (name == "shared-prefix") return {cache::prefix_eviction_policy::shared_prefix, horizon};
  throw bad_flag("--eviction", name, "expected lru, lfu or shared-prefix (comma-separated for several)");
}

// Llama-3-70B's prefill FLOPs of the block at each depth, after the blocks before it: the trace's longest chain's
// worth, computed once for every tiered replay.
std::vector<flops> prefill_by_depth(const std::vector<cache::block_request>& trace, std::size_t block_tokens) {
  std::size_t deepest = 0;
  for (const auto& q : trace) deepest = std::max(deepest, q.hash_ids.size());
  return model::prefill_by_block_depth(model::shapes::llama3_70b, deepest, block_tokens);
}

void run_block_replay(const replay_args& a) {
  refuse_flags(a,
               {"--embeddings", "--capacity", "--latent-size", "--warmup", "--index", "--ef", "--steps", "--step-flops",
                "--points-out"},
               "mooncake");
  if (a.capacity_blocks.empty())
    throw usage_error("--capacity-blocks is required with --format mooncake, e.g. 1000,10000");
  const auto block_tokens = count_flag(a.block_tokens, "--block-tokens", 1, 1u << 20);
  const auto horizon = count_flag(a.horizon, "--shared-horizon", 0, std::size_t{1} << 40);
  const bytes per_token = quantity_flag<bytes>(a.kv_per_token, "--kv-bytes-per-token");
  if (per_token <= bytes{})
    throw bad_flag("--kv-bytes-per-token", a.kv_per_token, "must be a positive size, e.g. 320KB");
  const bytes block = static_cast<double>(block_tokens) * per_token;
  std::vector<std::uint64_t> caps;
  for (const auto& g : a.capacity_blocks)
    for (const auto& item : split(g)) caps.push_back(count_flag(item, "--capacity-blocks", 0, std::uint64_t{1} << 32));
  if (caps.empty())
    throw bad_flag("--capacity-blocks", "",
                   "an empty value; give capacities in blocks, comma-separated, e.g. 1000,10000");
  std::sort(caps.begin(), caps.end());
  caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
  std::vector<std::string> policies = split(a.eviction);
  if (policies.empty()) throw bad_flag("--eviction", a.eviction, "name at least one of lru, lfu, shared-prefix");
  for (const auto& p : policies) (void)eviction_named(p, horizon);
  if (!a.plot.empty()) trinity::detail::require_output_file("--plot", a.plot);

  std::vector<cache::block_request> trace;
  try {
    trace = io::read_block_trace(a.trace, block_tokens);
  } catch (const invalid_input& x) {
    throw usage_error(std::string("--trace ") + x.what());
  }
  std::vector<std::uint64_t> lower;
  for (const auto& g : a.tier_blocks)
    for (const auto& item : split(g)) lower.push_back(count_flag(item, "--tier-blocks", 0, std::uint64_t{1} << 40));
  std::optional<plan::system> sys;
  if (!a.system.empty()) sys = system_from(a.system);
  if (!lower.empty() && !sys)
    throw usage_error("--tier-blocks needs --system: its tiers below the device are where blocks spill");
  if (sys && lower.empty()) throw usage_error("--system is for the tiered replay: give --tier-blocks too");
  if (sys && lower.size() + 1 > sys->tiers.size())
    throw bad_flag("--tier-blocks", a.tier_blocks.front(),
                   std::to_string(lower.size()) + " capacities, but " + sys->name + " has " +
                       std::to_string(sys->tiers.size() - 1) + " tiers below the device");
  const std::uint64_t distinct = cache::distinct_blocks(trace);
  const auto bound = cache::replay_blocks(trace, {.capacity_blocks = distinct, .block_tokens = block_tokens});

  reports::block_replay_report r{a.trace,      a.plot,  trace.size(), bound.blocks, distinct,
                                 block_tokens, horizon, per_token,    block,        bound,
                                 caps,         {},      sys,          {},           {}};
  for (const auto& p : policies) {
    reports::block_curve c{p, {}, {}};
    for (const auto cap : caps)
      c.rows.push_back(cache::replay_blocks(
          trace, {.capacity_blocks = cap, .block_tokens = block_tokens, .eviction = eviction_named(p, horizon)}));
    std::vector<model::capacity_point> pts;
    for (const auto& row : c.rows)
      if (row.capacity_blocks > 0 && row.block_hit_rate() < 1.0)
        pts.push_back({static_cast<double>(row.capacity_blocks) * block, row.block_hit_rate()});
    c.fits = reports::hit_rate_fits::of(pts, block);
    r.curves.push_back(std::move(c));
  }
  if (!a.plot.empty()) reports::draw(r);
  if (sys) {
    const auto prefill = prefill_by_depth(trace, block_tokens);
    for (const auto& q : trace)
      for (std::size_t d = 0; d < q.hash_ids.size(); ++d) r.prefill_total += prefill[d];
    for (const auto cap : caps) r.tiered.push_back(reports::tiered_replay(trace, *sys, cap, lower, block, prefill));
  }
  if (a.json)
    std::cout << reports::to_json(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  else
    reports::print(std::cout, r);
}

struct gen_args {
  std::string trace = "requests.csv", embeddings = "prompts.fvecs", requests = "10000", dimension = "768",
              topics = "200", zipf = "1.0", paraphrase = "0.6", drift = "4", seed = "1";
};

void run_gen(const gen_args& a) {
  cache::synthetic_trace_options o;
  o.requests = count_flag(a.requests, "--requests", 1, 100'000'000);
  o.dimension = count_flag(a.dimension, "--dimension", 8, 65536);
  o.topics = count_flag(a.topics, "--topics", 1, 10'000'000);
  o.zipf = number_flag(a.zipf, "--zipf", 0, 10, "an exponent from 0 (uniform) to 10");
  o.paraphrase = number_flag(a.paraphrase, "--paraphrase", 0, 1, "a share from 0 to 1");
  o.drift_phases = count_flag(a.drift, "--drift", 0, 1'000'000);
  o.seed = count_flag(a.seed, "--seed", 0, std::numeric_limits<std::size_t>::max());
  if (a.trace == a.embeddings) throw bad_flag("--embeddings", a.embeddings, "is also --trace; name two files");
  trinity::detail::require_output_file("--trace", a.trace);
  trinity::detail::require_output_file("--embeddings", a.embeddings);
  const auto t = cache::generate_trace(o);
  cache::write_fvecs(a.embeddings, t.embeddings, "--embeddings");
  cache::write_trace(a.trace, t.requests, "--trace");
  std::cout << "wrote " << a.trace << " (" << t.requests.size() << " requests) and " << a.embeddings << " ("
            << t.embeddings.rows() << " x " << t.embeddings.dimension << " fp32): SYNTHETIC, topic clusters with Zipf("
            << o.zipf << ") popularity, " << fixed(o.paraphrase * 100, 0) << "% paraphrases, popularity reshuffled "
            << o.drift_phases << " times; seed " << o.seed << '\n';
}

}  // namespace

void register_cache(CLI::App& app) {
  auto* cmd = app.add_subcommand("cache", "Memory -> compute: replay traces through the approximate cache");
  cmd->require_subcommand(1);
  auto ra = std::make_shared<replay_args>();
  auto* r = cmd->add_subcommand("replay", "Hit rate against capacity for a request trace, with both families fitted");
  r->add_option("--trace", ra->trace,
                "csv: timestamp,row lines (row indexes --embeddings); mooncake: Mooncake's "
                "JSONL of block-hashed requests")
      ->type_name("FILE")
      ->required();
  r->add_option("--format", ra->format, "csv (the approximate cache, default) or mooncake (the exact prefix cache)")
      ->type_name("csv|mooncake");
  r->add_option("--embeddings", ra->embeddings, "csv: prompt embeddings, .fvecs (ANN-benchmark format)")
      ->type_name("FILE");
  r->add_option("--capacity", ra->capacities, "csv: capacities, comma-separated or repeated (e.g. 1GB,10GB,100GB)")
      ->type_name("SIZE,...");
  r->add_option("--latent-size", ra->latent_sizes,
                "csv: bytes of one stored latent, comma-separated (paper: 0.016GB, "
                "0.04GB, 0.07GB)")
      ->type_name("SIZE,...");
  r->add_option("--capacity-blocks", ra->capacity_blocks, "mooncake: capacities in blocks, comma-separated or repeated")
      ->type_name("COUNT,...");
  r->add_option("--kv-bytes-per-token", ra->kv_per_token,
                "mooncake: the model's KV bytes per token, for the curve in "
                "bytes (default 327680B, Llama-3-70B in bf16)")
      ->type_name("SIZE");
  r->add_option("--system", ra->system,
                "mooncake: a system preset or JSON file; with --tier-blocks, the tiered "
                "replay spills to its tiers below the device over their links")
      ->type_name("SYSTEM");
  r->add_option("--tier-blocks", ra->tier_blocks,
                "mooncake: capacities in blocks of the system's tiers after the "
                "device's, in order (e.g. 100000 for host memory)")
      ->type_name("COUNT,...");
  r->add_option("--block-tokens", ra->block_tokens, "mooncake: tokens per block of the trace (default 512)")
      ->type_name("COUNT");
  r->add_option("--shared-horizon", ra->horizon,
                "mooncake, shared-prefix eviction: requests a shared block's stamp "
                "is moved ahead (default 1000)")
      ->type_name("COUNT");
  r->add_option("--warmup", ra->warmup, "Share of requests that only warm the cache (default 0.2)")->type_name("SHARE");
  r->add_option("--index", ra->index, "flat (exact, default) or hnsw (approximate)")->type_name("flat|hnsw");
  r->add_option("--ef", ra->ef, "HNSW search breadth (default 64)")->type_name("COUNT");
  r->add_option("--eviction", ra->eviction,
                "csv: lru (the paper's, default), lfu or benefit-aware; mooncake: any of "
                "lru (default), lfu, shared-prefix, comma-separated")
      ->type_name("POLICY");
  r->add_option("--steps", ra->steps, "Denoising steps of a full request, S (default 50)")->type_name("COUNT");
  r->add_option("--step-flops", ra->step_flops, "FLOPs per step, c_step (default 1e9)")->type_name("FLOPS");
  r->add_option("--plot", ra->plot, "Draw hit rate against capacity to this PNG (gnuplot)")->type_name("FILE");
  r->add_option("--points-out", ra->points_out, "Write capacity,hit_rate lines for `trinity model cache --points`")
      ->type_name("FILE");
  r->add_flag("--json", ra->json, "Print JSON");
  ra->command = r;
  r->callback([ra] { ra->format == "mooncake" ? run_block_replay(*ra) : run_replay(*ra); });

  auto ga = std::make_shared<gen_args>();
  auto* g = cmd->add_subcommand("gen-trace", "Write a SYNTHETIC request trace and its prompt embeddings");
  g->add_option("--trace", ga->trace, "CSV to write (default requests.csv)")->type_name("FILE");
  g->add_option("--embeddings", ga->embeddings, ".fvecs to write (default prompts.fvecs)")->type_name("FILE");
  g->add_option("--requests", ga->requests, "Requests (default 10000)")->type_name("COUNT");
  g->add_option("--dimension", ga->dimension, "Embedding width (default 768, CLIP ViT-L/14)")->type_name("COUNT");
  g->add_option("--topics", ga->topics, "Topic clusters (default 200)")->type_name("COUNT");
  g->add_option("--zipf", ga->zipf, "Topic popularity exponent (default 1.0)")->type_name("NUMBER");
  g->add_option("--paraphrase", ga->paraphrase, "Share of requests rephrasing an earlier prompt (default 0.6)")
      ->type_name("SHARE");
  g->add_option("--drift", ga->drift, "Times topic popularity reshuffles over the trace (default 4)")
      ->type_name("COUNT");
  g->add_option("--seed", ga->seed, "Random seed (default 1)")->type_name("COUNT");
  g->callback([ga] { run_gen(*ga); });
}

}  // namespace trinity::cli
