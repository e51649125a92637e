// trinity calibrate: measure every built-in compressor on this machine into a
// profile (JSON). trinity choose: read a profile and say, for a message and a
// link, whether compression pays and with what.

#include "cli.hpp"
#include "machine_profile.hpp"
#include "workload_from.hpp"

#include <trinity/compress/calibrate.hpp>
#include <trinity/compress/lossless/catalog.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/reduction_choice.hpp>
#include <trinity/units/format.hpp>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

namespace trinity::cli {

namespace {

struct calibrate_args {
  std::string size = "16MiB";
  int repeats = 3;
  std::string out;
  std::vector<std::string> only;
  bool json = false;
};

nlohmann::json to_json(const model::compressor_cost& c) {
  return {{"name", c.name},
          {"ratio", c.ratio},
          {"encode_rate_Bps", c.encode_rate.value()},
          {"decode_rate_Bps", c.decode_rate.value()},
          {"relative_error", c.relative_error},
          {"lossless", c.lossless},
          {"gathered", c.gathered}};
}

void run_calibrate(const calibrate_args& a) {
  const auto size = quantity_flag<bytes>(a.size, "--size");
  if (size < 4_KiB || size > 1_GiB) throw bad_flag("--size", a.size, "must be from 4 KiB to 1 GiB");
  if (a.repeats < 1 || a.repeats > 100) throw bad_flag("--repeats", std::to_string(a.repeats), "must be from 1 to 100");
  for (const auto& name : a.only) (void)compress::make_compressor(name);  // an unknown name fails before any work
  if (!a.out.empty()) trinity::detail::require_output_file("--out", a.out);
  const auto n = static_cast<std::size_t>(size.value() / 4);
  const auto samples = compress::normal_tensors(3, n, 2026);
  nlohmann::json profile{{"trinity_profile", 1},
                         {"calibration", {{"size_bytes", n * 4}, {"repeats", a.repeats}, {"data", "N(0,1) fp32"}}},
                         {"compressors", nlohmann::json::array()}};
  table t({"compressor", "ratio", "encode", "decode", "rel. error"});
  for (const auto& entry : compress::catalog()) {
    if (!a.only.empty() && std::find(a.only.begin(), a.only.end(), entry.name) == a.only.end()) continue;
    std::cerr << "calibrate: " << entry.name << "...\n";
    const auto cost = compress::measure(entry.make(), samples, {.repeats = a.repeats});
    profile["compressors"].push_back(to_json(cost));
    std::ostringstream ratio, err;
    ratio << std::setprecision(4) << cost.ratio;
    err << std::setprecision(3) << cost.relative_error;
    t.add({cost.name, ratio.str(), to_string(cost.encode_rate), to_string(cost.decode_rate), err.str()});
  }
  std::cerr << "calibrate: this machine's dense layers and thread link...\n";
  const auto machine = measure_machine();
  profile["machine"] = machine_json(machine);
  if (!a.out.empty()) {
    trinity::detail::write_output_file("--out", a.out,
                                       profile.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + '\n');
    std::cerr << "calibrate: profile written to " << a.out << '\n';
  }
  if (a.json) {
    std::cout << profile.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  } else {
    t.print(std::cout);
    std::cout << "\nmachine: dense layers " << to_string(machine.dense) << " per thread, " << machine.cores
              << " hardware threads; thread link " << to_string(machine.latency) << " + bytes / "
              << to_string(machine.bandwidth) << '\n';
  }
}

}  // namespace

io::profile read_profile_file(const std::string& path) {
  if (const auto problem = trinity::detail::input_file_problem(path))
    throw bad_flag("--profile", path, *problem + "; write one with `trinity calibrate --out " + path + "`");
  try {
    // Profiles written before "gathered" existed: the catalog's traits say, for the codecs it knows.
    return io::read_profile(io::load(path), [](std::string_view name) {
      for (const auto& entry : compress::catalog())
        if (entry.name == name) return compress::all_reduce_gathers(entry.make().traits());
      return false;
    });
  } catch (const invalid_input& e) {
    if (e.field() == path) throw bad_flag("--profile", path, e.problem());
    throw bad_flag("--profile", path, e.what());
  }
}

namespace {

struct choose_args {
  std::string profile, message, bandwidth, latency, compute, error, system, workload;
  int zero_stage = 0;
  bool json = false;
};

// The codecs a question is priced with: the profile's, else the system's devices' (GPU kernels on a GPU), else
// the CPU codecs measured on the `ci` build: what `trinity plan` prices, so one question has one answer.
std::vector<model::compressor_cost> codecs_for(const choose_args& a, const plan::system* s) {
  if (!a.profile.empty()) return read_profile(a.profile);
  return s ? plan::default_codecs_for(*s) : plan::default_codecs();
}

// A training workload's gradient reduction over its ranks, on the link they span: the data-parallel planner's
// and the layout search's question, priced as they price it (plan/reduction_choice.hpp).
void choose_for_workload(const choose_args& a) {
  for (const auto& [flag, value] : {std::pair{"--message", a.message},
                                    {"--bandwidth", a.bandwidth},
                                    {"--latency", a.latency},
                                    {"--compute", a.compute}})
    if (!value.empty())
      throw bad_flag(flag, value,
                     "prices a message of its own; with --workload the message is its gradient and the "
                     "link the one its ranks span on --system. Fix: drop one of them");
  const auto s = system_from(a.system);
  auto any = workload_from(a.workload, s);
  if (any.type() != "training")
    throw bad_flag("--workload", a.workload, "is not a training workload: only training reduces a gradient");
  auto w = any.as<plan::training_workload>();
  if (!a.error.empty()) w.error_budget = number_flag(a.error, "--error", 0.0, 1e9, "a relative L2 error >= 0");
  const auto r = plan::choose_reduction_codec(s, w, a.zero_stage, codecs_for(a, &s));
  const auto& chosen = r.codecs[r.chosen];
  const std::string what = std::string(a.zero_stage == 0 ? "all-reduce" : "reduce-scatter") + " of " + w.name +
                           "'s gradient over " + std::to_string(r.ranks) + " ranks on " + r.link;
  if (a.json) {
    nlohmann::json out{{"question", what},
                       {"choice", model::is_uncoded(chosen) ? std::string("raw") : chosen.name},
                       {"predicted_s", r.verdicts[r.chosen].time().value()},
                       {"error_budget", w.error_budget},
                       {"ranks", r.ranks},
                       {"link", r.link},
                       {"candidates", nlohmann::json::array()}};
    for (std::size_t i = 0; i < r.codecs.size(); ++i)
      out["candidates"].push_back({{"name", r.codecs[i].name},
                                   {"collective_s", r.verdicts[i].cost.comm.value()},
                                   {"coding_s", r.verdicts[i].cost.coding.value()},
                                   {"total_s", r.verdicts[i].time().value()},
                                   {"rejected", r.verdicts[i].rejected}});
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  std::cout << "The " << what << ":\n\n";
  table t({"codec", "collective", "encode + decode", "total", ""});
  for (std::size_t i = 0; i < r.codecs.size(); ++i) {
    const auto& v = r.verdicts[i];
    t.add({model::is_uncoded(r.codecs[i]) ? "raw (as the trainer holds it)" : r.codecs[i].name, to_string(v.cost.comm),
           to_string(v.cost.coding), to_string(v.time()), i == r.chosen ? "<- chosen" : v.rejected});
  }
  t.print(std::cout);
  std::cout << "\nchoice: " << (model::is_uncoded(chosen) ? std::string("raw") : chosen.name) << '\n';
}

void run_choose(const choose_args& a) {
  if (!a.workload.empty()) return choose_for_workload(a);
  if (a.bandwidth.empty() && a.system.empty())
    throw usage_error(
        "choose needs a link: --bandwidth RATE, or --system and --workload for a training workload's "
        "gradient reduction");
  std::optional<plan::system> s;
  if (!a.system.empty()) s = system_from(a.system);
  auto costs = codecs_for(a, s ? &*s : nullptr);
  // A message sent as it is needs no codec entry: the raw bytes are the baseline.
  std::erase_if(costs, [](const model::compressor_cost& c) { return model::is_uncoded(c); });
  const auto message = quantity_flag<bytes>(a.message.empty() ? "100MB" : a.message, "--message");
  const auto& over = s ? s->interconnect : plan::priced_link{};
  model::link_model link{
      a.bandwidth.empty() ? over.bandwidth : quantity_flag<bytes_per_second>(a.bandwidth, "--bandwidth"),
      a.latency.empty() ? (s ? over.latency : quantity_flag<seconds>("2us", "--latency"))
                        : quantity_flag<seconds>(a.latency, "--latency")};
  model::exchange_budget budget;
  if (!a.compute.empty()) budget.compute = quantity_flag<seconds>(a.compute, "--compute");
  if (!a.error.empty()) budget.error = number_flag(a.error, "--error", 0.0, 1e9, "a relative L2 error >= 0");
  const auto choice = model::choose(costs, message, link, budget);
  const std::string chosen = choice.index ? costs[*choice.index].name : "raw";
  if (a.json) {
    nlohmann::json out{{"choice", chosen},
                       {"predicted_s", choice.time.total().value()},
                       {"raw_s", choice.raw.total().value()},
                       {"error_budget", budget.error},
                       {"why", choice.why},
                       {"candidates", nlohmann::json::array()}};
    for (const auto& v : choice.verdicts)
      out["candidates"].push_back({{"name", costs[v.index].name},
                                   {"encode_s", v.time.encode.value()},
                                   {"transfer_s", v.time.transfer.value()},
                                   {"decode_s", v.time.decode.value()},
                                   {"total_s", v.time.total().value()},
                                   {"rejected", v.rejected}});
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    return;
  }
  table t({"compressor", "encode", "transfer", "decode", "total", ""});
  t.add({"raw (no codec)", "0 s", to_string(choice.raw.transfer), "0 s", to_string(choice.raw.total()),
         choice.index ? "" : "<- chosen"});
  for (const auto& v : choice.verdicts)
    t.add({costs[v.index].name, to_string(v.time.encode), to_string(v.time.transfer), to_string(v.time.decode),
           to_string(v.time.total()), choice.index == v.index ? "<- chosen" : v.rejected});
  t.print(std::cout);
  std::cout << "\nchoice: " << chosen << "\nwhy: " << choice.why << '\n';
}

}  // namespace

void register_compress(CLI::App& app) {
  auto ca = std::make_shared<calibrate_args>();
  auto* c = app.add_subcommand("calibrate", "Measure every built-in compressor on this machine into a profile");
  c->add_option("--size", ca->size, "Tensor size to measure on (default 16MiB)")->type_name("SIZE");
  c->add_option("--repeats", ca->repeats, "Timed calls per codec; the fastest counts (default 3)")->type_name("COUNT");
  c->add_option("--out", ca->out, "Write the profile (JSON) here")->type_name("FILE");
  c->add_option("--compressor", ca->only, "Only these compressors (repeat the flag)")->type_name("NAME");
  c->add_flag("--json", ca->json, "Print the profile as JSON instead of a table");
  c->callback([ca] { run_calibrate(*ca); });

  auto ch = std::make_shared<choose_args>();
  auto* h = app.add_subcommand("choose", "Compress or send? The fastest codec for a message over a link");
  h->add_option("--profile", ch->profile,
                "Codec costs from `trinity calibrate --out` (default: --system's devices' codecs, else the CPU "
                "codecs of docs/compression.md, as plan prices them)")
      ->type_name("FILE");
  h->add_option("--system", ch->system,
                "A preset or system file: its devices' codecs, and its interconnect as the link (with --workload: the "
                "link the workload's ranks span)")
      ->type_name("PRESET|FILE");
  h->add_option("--workload", ch->workload,
                "A training workload (preset or file): its gradient reduction over its ranks, priced as plan prices "
                "it, in place of --message and --bandwidth")
      ->type_name("PRESET|FILE");
  h->add_option("--zero-stage", ch->zero_stage,
                "With --workload: 0 all-reduces the gradient (DDP), 1-3 reduce-scatter it")
      ->type_name("0..3")
      ->check(CLI::Range(0, 3));
  h->add_option("--message", ch->message, "Message size (default 100MB)")->type_name("SIZE");
  h->add_option("--bandwidth", ch->bandwidth, "Link bandwidth (e.g. 10Gbps; default: --system's interconnect)")
      ->type_name("RATE");
  h->add_option("--latency", ch->latency, "Link latency (default 2us, or --system's interconnect's)")
      ->type_name("TIME");
  h->add_option("--compute", ch->compute, "Most encode + decode time allowed (default: no limit)")->type_name("TIME");
  h->add_option("--error", ch->error,
                "Largest relative L2 error allowed (default 0.01, the planner's, or the workload's; 0: lossless only)")
      ->type_name("NUMBER");
  h->add_flag("--json", ch->json, "Print JSON (choice, predicted_s, candidates)");
  h->callback([ch] { run_choose(*ch); });
}

}  // namespace trinity::cli
