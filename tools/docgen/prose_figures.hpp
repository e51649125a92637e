#pragma once
// The figures a page's prose quotes from the parallel step model's validation, inline:
//
//   comes out <!-- figure: fast "gpt-oss-120b/64" -->35<!-- end figure -->% fast
//
// The text between the markers is what the published training runs (bench/published/training-runs.json), priced
// as `trinity validate` prices them, give now: `--check` reports a figure that drifted, `--write` rewrites it, and a
// sentence whose direction the model reversed ("fast" for a run it now prices slow) is refused, since no rewrite of
// the number can make it true. The kinds:
//
//   fast RUN, slow RUN     the run's |error| in whole percent; the run must be predicted fast (slow)
//   ratio RUN              its published step over its predicted one, one decimal ("2.7 times slower than priced")
//   mfu RUN                its predicted MFU in whole percent
//   share RUN PART         a part of its predicted step in whole percent (PART: a breakdown key of
//                          `trinity validate --explain --json`, less "_s": gemm, attention, expert_parallel, ...)
//   speedup RUN OTHER      OTHER's predicted step over RUN's, two decimals
//   measured-speedup RUN OTHER   the same of their published steps
//   gb RUN                 its predicted device memory in whole gigabytes
//   within SOURCE PRECISION   the held-out runs of a source in bf16 (16 bits) or fp8: their worst |error|, in
//                          whole percent rounded up ("within 10%" holds while the text is the figure)
//   runs [ROLE]            how many runs the file has (of a role: fit, held-out)
//   over-memory            how many runs the model puts over their device's memory (each ran, so each fitted)

#include <nlohmann/json.hpp>
#include <trinity/io/parallel_calibration.hpp>
#include <trinity/workloads/parallel_breakdown.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace docgen {

//! Every published training run priced as trinity validate prices it (io::price_runs), by name.
class priced_runs {
 public:
  using priced = trinity::io::priced_run;

  explicit priced_runs(const std::filesystem::path& root)
      : file_(trinity::io::read_published_runs(
            trinity::io::load((root / "bench" / "published" / "training-runs.json").string()))) {
    const auto probe = trinity::io::read_transformer_probe(
        trinity::io::load((root / "bench" / "results" / "transformer-probe-h100.json").string()));
    for (const auto& p : trinity::io::price_runs(file_, trinity::io::calibrate(probe, file_)))
      by_name_.emplace(p.run->name, p);
  }
  priced_runs(const priced_runs&) = delete;  // the rows point into file_
  priced_runs& operator=(const priced_runs&) = delete;

  [[nodiscard]] const std::map<std::string, priced>& by_name() const noexcept { return by_name_; }
  [[nodiscard]] const priced& at(const std::string& name) const {
    const auto it = by_name_.find(name);
    if (it == by_name_.end())
      throw std::runtime_error("figure: \"" + name + "\" is not a run of bench/published/training-runs.json");
    return it->second;
  }

 private:
  trinity::io::published_runs file_;
  std::map<std::string, priced> by_name_;
};

namespace detail {

inline std::string decimals(double v, int n) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", n, v);
  return b;
}
inline std::string whole_percent(double share) { return std::to_string(std::lround(share * 100.0)); }

//! `fast "name"`, `share "name" gemm`, `speedup "a" "b"`: the kind, then words or quoted names.
inline std::vector<std::string> words_of(const std::string& spec) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < spec.size();) {
    if (spec[i] == ' ') {
      ++i;
      continue;
    }
    const bool quoted = spec[i] == '"';
    const std::size_t start = quoted ? i + 1 : i;
    const std::size_t end = spec.find(quoted ? '"' : ' ', start);
    if (quoted && end == std::string::npos) throw std::runtime_error("figure: " + spec + ": a name is not closed");
    out.push_back(spec.substr(start, (end == std::string::npos ? spec.size() : end) - start));
    i = end == std::string::npos ? spec.size() : end + 1;
  }
  return out;
}

//! The worst |error| of the held-out runs of `source` in fp8 (or not), in whole percent rounded up.
inline std::string worst_percent(const priced_runs& runs, const std::string& spec, const std::string& source,
                                 bool fp8) {
  double worst = -1;
  for (const auto& [name, p] : runs.by_name())
    if (p.run->source == source && p.run->role == "held-out" && p.run->job.fp8 == fp8)
      worst = std::max(worst, std::abs(p.error));
  if (worst < 0)
    throw std::runtime_error("figure: " + spec + ": no held-out run of source " + source + " in that precision");
  return std::to_string(static_cast<long>(std::ceil(worst * 100.0)));
}

}  // namespace detail

//! The text a figure's spec gives now.
inline std::string figure(const priced_runs& runs, const std::string& spec) {
  const auto w = detail::words_of(spec);
  const auto need = [&](std::size_t n) {
    if (w.size() != n)
      throw std::runtime_error("figure: " + spec + ": expected " + std::to_string(n - 1) + " after " +
                               (w.empty() ? std::string("the kind") : w[0]));
  };
  if (w.empty()) throw std::runtime_error("figure: an empty spec");
  const std::string& kind = w[0];
  if (kind == "fast" || kind == "slow") {
    need(2);
    const auto& p = runs.at(w[1]);
    if ((kind == "fast") != (p.error < 0))
      throw std::runtime_error("figure: " + spec + ": the run now comes out " + (p.error < 0 ? "fast" : "slow") + " (" +
                               detail::decimals(p.error * 100, 1) + "%); the sentence says " + kind + ": reword it");
    return detail::whole_percent(std::abs(p.error));
  }
  if (kind == "ratio") {
    need(2);
    const auto& p = runs.at(w[1]);
    return detail::decimals(p.run->iteration_s / p.cost.step.value(), 1);
  }
  if (kind == "mfu") {
    need(2);
    return detail::whole_percent(runs.at(w[1]).cost.mfu);
  }
  if (kind == "gb") {
    need(2);
    return std::to_string(std::lround(runs.at(w[1]).cost.device_bytes.value() / 1e9));
  }
  if (kind == "share") {
    need(3);
    const auto& p = runs.at(w[1]);
    const auto parts = trinity::workloads::parallel_predicted_json(p.cost, {}).at("breakdown");
    const auto part = parts.find(w[2] + "_s");
    if (part == parts.end()) throw std::runtime_error("figure: " + spec + ": " + w[2] + " is not a part of the step");
    return detail::whole_percent(part->get<double>() / p.cost.step.value());
  }
  if (kind == "speedup" || kind == "measured-speedup") {
    need(3);
    const auto &a = runs.at(w[1]), &b = runs.at(w[2]);
    return kind == "speedup" ? detail::decimals(b.cost.step.value() / a.cost.step.value(), 2)
                             : detail::decimals(b.run->iteration_s / a.run->iteration_s, 2);
  }
  if (kind == "within") {
    need(3);
    if (w[2] != "bf16" && w[2] != "fp8")
      throw std::runtime_error("figure: " + spec + ": " + w[2] + " is not a precision (bf16 or fp8)");
    return detail::worst_percent(runs, spec, w[1], w[2] == "fp8");
  }
  if (kind == "runs") {
    if (w.size() > 2) throw std::runtime_error("figure: " + spec + ": runs takes one role at most");
    if (w.size() == 2 && w[1] != "fit" && w[1] != "held-out")
      throw std::runtime_error("figure: " + spec + ": " + w[1] + " is not a role (fit or held-out)");
    return std::to_string(std::count_if(runs.by_name().begin(), runs.by_name().end(),
                                        [&](const auto& x) { return w.size() == 1 || x.second.run->role == w[1]; }));
  }
  if (kind == "over-memory") {
    if (w.size() > 1) throw std::runtime_error("figure: " + spec + ": over-memory takes nothing");
    return std::to_string(
        std::count_if(runs.by_name().begin(), runs.by_name().end(), [](const auto& x) { return !x.second.fits(); }));
  }
  throw std::runtime_error("figure: " + spec +
                           ": unknown kind (fast, slow, ratio, mfu, gb, share, speedup, measured-speedup, within, "
                           "runs, over-memory)");
}

//! `line` with each inline figure as the runs give it now; `stale` gains a note for each that differed.
inline std::string with_figures(const std::string& line, const priced_runs& runs, std::vector<std::string>& stale) {
  static const std::string open = "<!-- figure: ", close = " -->", end = "<!-- end figure -->";
  std::string out;
  std::size_t at = 0;
  for (std::size_t start; (start = line.find(open, at)) != std::string::npos;) {
    const std::size_t spec_end = line.find(close, start + open.size());
    const std::size_t text = spec_end == std::string::npos ? spec_end : spec_end + close.size();
    const std::size_t stop = text == std::string::npos ? text : line.find(end, text);
    if (stop == std::string::npos)
      throw std::runtime_error("figure: a marker without its " + end + " on the same line: " + line.substr(start));
    const std::string spec = line.substr(start + open.size(), spec_end - start - open.size());
    const std::string have = line.substr(text, stop - text), want = figure(runs, spec);
    if (have != want) stale.push_back("(" + spec + ") the prose says " + have + ", the runs give " + want);
    out += line.substr(at, text - at) + want + end;
    at = stop + end.size();
  }
  return out + line.substr(at);
}

}  // namespace docgen
