#pragma once
//! \file
//! Request traces for cache replay: a CSV of `timestamp,row` lines, where row
//! indexes a prompt embedding in an .fvecs file, and a synthetic generator
//! for when no real trace is at hand. The synthetic one is documented as such:
//! topic clusters with Zipf popularity, prompts that paraphrase earlier ones
//! of their topic, and popularity that drifts over time. Its similarities are
//! set to span the paper's Table 1 (same-topic fresh prompts near 0.7,
//! paraphrases from 0.8 to 0.99), not measured from CLIP.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/cache/fvecs.hpp>
#include <trinity/detail/input_file.hpp>
#include <trinity/detail/output_file.hpp>
#include <trinity/error.hpp>

namespace trinity::cache {

struct request {
  double timestamp = 0;
  std::size_t row = 0;
};

//! Parses `timestamp,row` lines (an optional header `timestamp,row`, blank lines skipped), checks every row
//! against `rows` embeddings, and returns the requests in timestamp order (ties keep file order).
inline std::vector<request> parse_trace(std::string_view text, std::size_t rows, const std::string& what = "trace") {
  // A NUL byte would end a cell for one reader and not another: refused where it stands, as the JSON readers do.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw invalid_input(what, "holds a NUL byte at offset " + std::to_string(nul) +
                                  "; a trace is text. Fix: remove it (is this the right file?)");
  std::vector<request> out;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    const std::string at = what + ":" + std::to_string(line_no);
    if (out.empty() && line == "timestamp,row") continue;
    const auto comma = line.find(',');
    trinity::detail::require(comma != std::string_view::npos && line.find(',', comma + 1) == std::string_view::npos, at,
                             "expected two columns `timestamp,row`, got '" + std::string(line) + "'");
    const std::string_view ts = line.substr(0, comma), rs = line.substr(comma + 1);
    request r;
    const auto [te, tec] = std::from_chars(ts.data(), ts.data() + ts.size(), r.timestamp);
    trinity::detail::require(tec == std::errc{} && te == ts.data() + ts.size() && std::isfinite(r.timestamp), at,
                             "timestamp '" + std::string(ts) + "' is not a finite number");
    const auto [re, rec] = std::from_chars(rs.data(), rs.data() + rs.size(), r.row);
    trinity::detail::require(rec == std::errc{} && re == rs.data() + rs.size(), at,
                             "row '" + std::string(rs) + "' is not a whole number");
    trinity::detail::require(r.row < rows, at,
                             "row " + std::to_string(r.row) + " is past the " + std::to_string(rows) +
                                 " vectors of the embeddings file; rows count from 0");
    out.push_back(r);
  }
  trinity::detail::require(!out.empty(), what, "holds no requests; expected lines of `timestamp,row`");
  std::stable_sort(out.begin(), out.end(),
                   [](const request& a, const request& b) { return a.timestamp < b.timestamp; });
  return out;
}

inline std::vector<request> read_trace(const std::string& path, std::size_t rows) {
  return parse_trace(trinity::detail::read_input_file(path, trinity::detail::max_data_bytes), rows, path);
}

//! Writes the trace as `timestamp,row` lines, whole or not at all (detail/output_file.hpp); a failure throws
//! invalid_input naming `field` (the flag that named the file) and the path.
inline void write_trace(const std::string& path, const std::vector<request>& trace, std::string_view field = "trace") {
  trinity::detail::output_file file{std::string(field), path};
  auto& out = file.stream();
  out << "timestamp,row\n";
  char buf[64];
  for (const auto& r : trace) {
    const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, r.timestamp);
    out << std::string_view(buf, static_cast<std::size_t>(p - buf)) << ',' << r.row << '\n';
  }
  file.commit();
}

struct synthetic_trace_options {
  std::size_t requests = 10'000;
  std::size_t dimension = 768;  //!< CLIP ViT-L/14's text embedding width
  std::size_t topics = 200;
  double zipf = 1.0;             //!< topic popularity ∝ 1 / rank^zipf
  double paraphrase = 0.6;       //!< share of requests that rephrase an earlier prompt of their topic
  std::size_t drift_phases = 4;  //!< popularity reshuffles this many times over the trace
  double rate = 1.0;             //!< mean requests per second (Poisson arrivals)
  std::uint64_t seed = 1;
};

struct synthetic_trace {
  embedding_matrix embeddings;    //!< one prompt per request
  std::vector<request> requests;  //!< request i uses row i
};

inline synthetic_trace generate_trace(const synthetic_trace_options& o) {
  trinity::detail::require(o.requests >= 1 && o.requests <= 100'000'000, "requests", "must be from 1 to 100000000");
  trinity::detail::require(o.dimension >= 8 && o.dimension <= 65536, "dimension", "must be from 8 to 65536");
  trinity::detail::require(o.topics >= 1 && o.topics <= 10'000'000, "topics", "must be from 1 to 10000000");
  trinity::detail::require(o.zipf >= 0 && o.zipf <= 10, "zipf", "must lie in [0, 10]");
  trinity::detail::require(o.paraphrase >= 0 && o.paraphrase <= 1, "paraphrase", "is a share: it must lie in [0, 1]");
  trinity::detail::require(o.rate > 0 && std::isfinite(o.rate), "rate",
                           "must be a positive number of requests per second");
  const std::size_t d = o.dimension;
  std::mt19937_64 gen(o.seed);
  std::normal_distribution<double> normal(0, 1);
  std::uniform_real_distribution<double> unit(0, 1);
  auto unit_vector = [&](std::vector<double>& v) {
    double n = 0;
    for (auto& x : v) n += x * x;
    for (auto& x : v) x /= std::sqrt(n);
  };
  std::vector<std::vector<double>> centres(o.topics, std::vector<double>(d));
  for (auto& c : centres) {
    for (auto& x : c) x = normal(gen);
    unit_vector(c);
  }
  std::vector<double> weight(o.topics);
  for (std::size_t r = 0; r < o.topics; ++r) weight[r] = 1.0 / std::pow(static_cast<double>(r + 1), o.zipf);
  std::discrete_distribution<std::size_t> rank_of(weight.begin(), weight.end());
  std::vector<std::size_t> topic_at_rank(o.topics);
  for (std::size_t r = 0; r < o.topics; ++r) topic_at_rank[r] = r;
  std::vector<std::vector<std::size_t>> recent(o.topics);  // each topic's last prompts, for paraphrase
  // Same-topic fresh prompts: cos ≈ 1/(1 + d·σ²) = 0.7; a paraphrase adds d·σ² in [0.02, 0.6] to its source.
  const double sigma_topic = std::sqrt(0.43 / static_cast<double>(d));
  std::exponential_distribution<double> gap(o.rate);

  synthetic_trace t;
  t.embeddings.dimension = d;
  t.embeddings.values.resize(o.requests * d);
  const std::size_t phase_length = o.requests / (o.drift_phases + 1) + 1;
  double now = 0;
  std::vector<double> v(d);
  for (std::size_t i = 0; i < o.requests; ++i) {
    if (i > 0 && i % phase_length == 0) std::shuffle(topic_at_rank.begin(), topic_at_rank.end(), gen);  // drift
    const std::size_t topic = topic_at_rank[rank_of(gen)];
    auto& mine = recent[topic];
    if (!mine.empty() && unit(gen) < o.paraphrase) {
      const std::size_t src = mine[static_cast<std::size_t>(unit(gen) * static_cast<double>(mine.size()))];
      const double sigma = std::sqrt((0.02 + 0.58 * unit(gen)) / static_cast<double>(d));
      for (std::size_t k = 0; k < d; ++k) v[k] = t.embeddings.values[src * d + k] + sigma * normal(gen);
    } else {
      for (std::size_t k = 0; k < d; ++k) v[k] = centres[topic][k] + sigma_topic * normal(gen);
    }
    unit_vector(v);
    for (std::size_t k = 0; k < d; ++k) t.embeddings.values[i * d + k] = static_cast<float>(v[k]);
    mine.push_back(i);
    if (mine.size() > 32) mine.erase(mine.begin());
    now += gap(gen);
    t.requests.push_back({now, i});
  }
  return t;
}

}  // namespace trinity::cache
