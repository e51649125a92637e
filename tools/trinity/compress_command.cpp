// trinity calibrate: measure every built-in compressor on this machine into a
// profile (JSON). trinity choose: read a profile and say, for a message and a
// link, whether compression pays and with what.

#include "cli.hpp"
#include "machine_profile.hpp"

#include <trinity/compress/calibrate.hpp>
#include <trinity/compress/lossless/catalog.hpp>
#include <trinity/model/compression.hpp>
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
  std::string profile, message = "100MB", bandwidth, latency = "2us", compute, error;
  bool json = false;
};

void run_choose(const choose_args& a) {
  const auto costs = read_profile(a.profile);
  const auto message = quantity_flag<bytes>(a.message, "--message");
  model::link_model link{quantity_flag<bytes_per_second>(a.bandwidth, "--bandwidth"),
                         quantity_flag<seconds>(a.latency, "--latency")};
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
  h->add_option("--profile", ch->profile, "A profile from `trinity calibrate --out`")->type_name("FILE")->required();
  h->add_option("--message", ch->message, "Message size (default 100MB)")->type_name("SIZE");
  h->add_option("--bandwidth", ch->bandwidth, "Link bandwidth (e.g. 10Gbps)")->type_name("RATE")->required();
  h->add_option("--latency", ch->latency, "Link latency (default 2us)")->type_name("TIME");
  h->add_option("--compute", ch->compute, "Most encode + decode time allowed (default: no limit)")->type_name("TIME");
  h->add_option("--error", ch->error,
                "Largest relative L2 error allowed (default 0.01, the planner's; 0: lossless only)")
      ->type_name("NUMBER");
  h->add_flag("--json", ch->json, "Print JSON (choice, predicted_s, why, candidates)");
  h->callback([ch] { run_choose(*ch); });
}

}  // namespace trinity::cli
