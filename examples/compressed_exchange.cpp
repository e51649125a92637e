// compressed_exchange: the compute -> bandwidth trade, measured.
//
// Sends one gradient (100 MB of N(0,1) fp32 by default) over a simulated
// α-β link at 1, 10, 100 and 400 Gbps with every built-in compressor. Encode
// and decode run for real on this CPU; the link's time is latency + bytes /
// bandwidth for the bytes each codec actually produced. Beside the measured
// times it prints the chooser's pick, made beforehand from a calibration on a
// smaller tensor (what `trinity calibrate` does), and checks that the pick is
// the measured fastest or within 10% of it at every speed, among what it may
// pick: sending the raw bytes, or a codec within its error budget (0.01).
//
//   compressed_exchange [--size 100MB] [--speeds 1,10,100,400] [--out DIR]
//
// Writes DIR/compressed_exchange.csv, .json and, when gnuplot is installed,
// .png (time against link speed per compressor). Exits 1 if a pick misses.

#include <trinity/compress/calibrate.hpp>
#include <trinity/compress/lossless/catalog.hpp>
#include <trinity/detail/host.hpp>
#include <trinity/detail/run_program.hpp>
#include <trinity/links/parameters.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/units.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#ifndef TRINITY_EXAMPLE_BUILD
#define TRINITY_EXAMPLE_BUILD "unknown build"
#endif

using namespace trinity;
using namespace trinity::literals;

namespace {

struct measured {
  std::string name;
  double encode_s = 0, decode_s = 0;
  std::size_t wire_bytes = 0;
};

//! Real encode and decode of `x`, after a warm-up call on `warm` so stateful codecs run in steady state.
measured run(const compress::catalog_entry& entry, const std::vector<float>& warm, const std::vector<float>& x) {
  using clock = std::chrono::steady_clock;
  auto c = entry.make();
  compress::frame_buffer frame;
  c.encode(warm, frame);
  compress::decoder rx{{.max_bytes = std::size_t{1} << 34}};
  (void)rx.decode(frame.bytes());
  std::vector<float> out(x.size());
  measured m{entry.name, INFINITY, INFINITY, 0};
  // Three timed rounds, the fastest counts: the first may still pay for page faults.
  for (int round = 0; round < 3; ++round) {
    frame.clear();
    const auto t0 = clock::now();
    c.encode(round % 2 == 0 ? x : warm, frame);
    const auto t1 = clock::now();
    rx.decode_into(frame.bytes(), out);
    const auto t2 = clock::now();
    m.encode_s = std::min(m.encode_s, std::chrono::duration<double>(t1 - t0).count());
    m.decode_s = std::min(m.decode_s, std::chrono::duration<double>(t2 - t1).count());
    if (round == 0) m.wire_bytes = frame.size();
  }
  return m;
}

std::vector<double> parse_speeds(const std::string& s) {
  std::vector<double> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stod(item));
  return v;
}

// The flags, with TRINITY_BENCH_QUICK (as the docs test sets it) shrinking the default message: the run checks the
// program, not speed. Nothing where a flag is unknown.
struct options {
  bool quick = false;
  std::string size, speeds = "1,10,100,400", out = ".";
};
std::optional<options> options_of(int argc, char** argv) {
  options o;
  const char* quick = std::getenv("TRINITY_BENCH_QUICK");
  o.quick = quick && *quick && std::string(quick) != "0";
  o.size = o.quick ? "4MB" : "100MB";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--size")
      o.size = argv[i + 1];
    else if (flag == "--speeds")
      o.speeds = argv[i + 1];
    else if (flag == "--out")
      o.out = argv[i + 1];
    else
      return std::nullopt;
  }
  return o;
}

// The JSON record's opening: the build and the machine, so a recorded run names what it measured.
std::string json_header(std::size_t message_bytes, seconds latency) {
  char today[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(today, sizeof today, "%Y-%m-%d", std::gmtime(&now));
  std::ostringstream json;
  json << "{\n  \"build\": \"" << TRINITY_EXAMPLE_BUILD << "\",\n  \"cpu\": \"" << trinity::detail::cpu_model()
       << "\",\n  \"date\": \"" << today << "\",\n  \"message_bytes\": " << message_bytes
       << ",\n  \"latency_s\": " << latency.value() << ",\n  \"speeds\": [\n";
  return json.str();
}

// Every codec's costs calibrated on at most 16 MiB of the n values, as `trinity calibrate` would.
std::vector<model::compressor_cost> calibrated_costs(std::size_t n) {
  std::cerr << "calibrating every compressor on 16 MiB...\n";
  const auto samples = compress::normal_tensors(3, std::min<std::size_t>(n, (16u << 20) / 4), 7);
  std::vector<model::compressor_cost> costs;
  for (const auto& entry : compress::catalog()) costs.push_back(compress::measure(entry.make(), samples));
  return costs;
}

// Every codec's exchange of the whole gradient (grads[1], after a warm-up on grads[0]), timed.
std::vector<measured> exchanged(bytes size, const std::vector<std::vector<float>>& grads) {
  std::cerr << "exchanging " << to_string(size) << " with every compressor...\n";
  std::vector<measured> runs;
  for (const auto& entry : compress::catalog()) {
    std::cerr << "  " << entry.name << '\n';
    runs.push_back(run(entry, grads[0], grads[1]));
  }
  return runs;
}

// 4. The picture: one line per compressor, time against link speed, log-log (where gnuplot is installed).
void draw(const std::string& base, bytes size, const std::vector<measured>& runs, const std::vector<double>& speeds,
          const std::vector<std::vector<double>>& totals) {
  if (!trinity::detail::program_on_path("gnuplot")) return;
  // gnuplot is started with an argument vector and reads the script from its standard input: no shell between,
  // so no name in the script or path can run anything.
  std::ostringstream gp;
  gp << "set terminal pngcairo size 1100,700 noenhanced\nset output\n"
     << "set logscale xy\nset key outside right\n"
     << "set xlabel 'link speed (Gbps)'\nset ylabel 'encode + transfer + decode (s)'\n"
     << "set title 'Sending " << to_string(size) << " of fp32 gradient: compress or send?'\nplot ";
  for (std::size_t i = 0; i < runs.size(); ++i)
    gp << (i ? ", " : "") << "'-' using 1:2 with linespoints title '" << runs[i].name << "'";
  gp << '\n';
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (std::size_t s = 0; s < speeds.size(); ++s) gp << speeds[s] << ' ' << totals[s][i] << '\n';
    gp << "e\n";
  }
  gp << "unset output\n";
  const auto r = trinity::detail::run_program({"gnuplot"}, gp.str());
  std::ofstream png(base + ".png", std::ios::binary);
  png << r.out;
  png.close();
  if (!r.end.succeeded() || !png)
    std::cerr << "gnuplot failed (" << r.end.describe() << "); the CSV is still in " << base << ".csv\n";
}

}  // namespace

int main(int argc, char** argv) {
  const auto flags = options_of(argc, argv);
  if (!flags) {
    std::cerr << "usage: compressed_exchange [--size 100MB] [--speeds 1,10,100,400] [--out DIR]\n";
    return 2;
  }
  const auto& [quick_mode, size_text, speeds_text, out_dir] = *flags;
  const bytes size = units::parse<bytes>(size_text, "--size");
  const auto n = static_cast<std::size_t>(size.value() / 4);
  const std::vector<double> speeds = parse_speeds(speeds_text);
  const seconds latency = links::parameters::rdma_latency;  // a NIC-attached link (links/parameters.hpp)

  // 1. Calibrate on a smaller tensor, as `trinity calibrate` would, and predict from that alone.
  const auto costs = calibrated_costs(n);
  // 2. Measure the real exchange of the full gradient.
  const auto grads = compress::normal_tensors(2, n, 11);
  auto runs = exchanged(size, grads);
  // Sending the raw bytes: no codec, no frame, no copy. The baseline every codec must beat.
  const std::size_t raw = runs.size();
  runs.push_back({"raw", 0.0, 0.0, n * 4});
  // Only what the chooser may pick races: codecs within its error budget (the planner's 0.01), and raw.
  const model::exchange_budget budget;
  const auto admissible = [&](std::size_t i) { return i == raw || costs[i].relative_error <= budget.error; };

  // 3. Per speed: measured totals, the chooser's pick, and whether it holds.
  std::filesystem::create_directories(out_dir);
  const std::string base = (std::filesystem::path(out_dir) / "compressed_exchange").string();
  std::ofstream csv(base + ".csv");
  csv << "compressor,link_gbps,wire_bytes,encode_s,transfer_s,decode_s,total_s,predicted_s,chosen\n";
  std::ostringstream json;
  json << json_header(n * 4, latency);
  bool all_hold = true;
  std::vector<std::vector<double>> totals;
  for (std::size_t s = 0; s < speeds.size(); ++s) {
    const model::link_model link{bytes_per_second{speeds[s] * 1e9 / 8}, latency};
    const auto choice = model::choose(costs, bytes{static_cast<double>(n * 4)}, link, budget);
    const std::size_t pick = choice.index ? *choice.index : raw;
    std::vector<double> total(runs.size());
    std::size_t fastest = raw;
    const auto measure_totals = [&] {
      fastest = raw;
      for (std::size_t i = 0; i < runs.size(); ++i) {
        const double transfer = latency.value() + static_cast<double>(runs[i].wire_bytes) / link.bandwidth.value();
        total[i] = runs[i].encode_s + transfer + runs[i].decode_s;
        if (admissible(i) && total[i] < total[fastest]) fastest = i;
      }
    };
    measure_totals();
    // A miss is confirmed before it is reported: the pick and the apparent fastest are timed again and keep
    // their fastest round, so one interrupted round on a busy machine does not pass for the chooser's error.
    if (total[pick] > 1.10 * total[fastest])
      for (const std::size_t i : {pick, fastest}) {
        if (i == raw) continue;  // nothing to time: the link's time is a formula here
        const auto again = run(compress::catalog()[i], grads[0], grads[1]);
        runs[i].encode_s = std::min(runs[i].encode_s, again.encode_s);
        runs[i].decode_s = std::min(runs[i].decode_s, again.decode_s);
      }
    measure_totals();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const double transfer = latency.value() + static_cast<double>(runs[i].wire_bytes) / link.bandwidth.value();
      csv << runs[i].name << ',' << speeds[s] << ',' << runs[i].wire_bytes << ',' << runs[i].encode_s << ',' << transfer
          << ',' << runs[i].decode_s << ',' << total[i] << ','
          << (i == raw ? choice.raw : choice.verdicts[i].time).total().value() << ',' << (i == pick ? 1 : 0) << '\n';
    }
    totals.push_back(total);
    const double gap = total[pick] / total[fastest] - 1.0;
    const bool holds = gap <= 0.10;
    all_hold = all_hold && holds;
    std::printf("%6g Gbps: chooser picks %-28s %9.2f ms measured; fastest %-28s %9.2f ms (%+.1f%%) %s\n", speeds[s],
                runs[pick].name.c_str(), total[pick] * 1e3, runs[fastest].name.c_str(), total[fastest] * 1e3, gap * 100,
                holds ? "ok" : "MISSED");
    json << "    {\"link_gbps\": " << speeds[s] << ", \"chosen\": \"" << runs[pick].name
         << "\", \"chosen_measured_s\": " << total[pick] << ", \"fastest\": \"" << runs[fastest].name
         << "\", \"fastest_measured_s\": " << total[fastest]
         << ", \"within_10_percent\": " << (holds ? "true" : "false") << ",\n     \"totals_s\": {";
    for (std::size_t i = 0; i < runs.size(); ++i) json << (i ? ", " : "") << '"' << runs[i].name << "\": " << total[i];
    json << "}}" << (s + 1 < speeds.size() ? "," : "") << '\n';
  }
  json << "  ]\n}\n";
  std::ofstream(base + ".json") << json.str();
  csv.close();

  draw(base, size, runs, speeds, totals);
  std::printf("wrote %s.csv and %s.json%s\n", base.c_str(), base.c_str(),
              std::filesystem::exists(base + ".png") ? (" and " + base + ".png").c_str() : "");
  std::printf(all_hold ? "the chooser's pick is the measured fastest or within 10%% of it at every speed\n"
                       : "the chooser missed the measured fastest by more than 10%% at some speed\n");
  // Quick mode (the docs test's) checks that the program runs: a few milliseconds of coding on a shared machine
  // decide nothing, so a miss there is reported, not failed. Run as written, a miss still exits 1.
  if (!all_hold && quick_mode) {
    std::printf("(quick mode: the figures mean nothing, so the miss is not an error)\n");
    return 0;
  }
  return all_hold ? 0 : 1;
}
