#pragma once
//! \file
//! Reading embedding lookup traces in the DLRM reference's format (facebookresearch/dlrm): one trace a table,
//! `trace_<t>.log`, the rows looked up in order as one line of ", "-separated integers (dlrm_data_pytorch.py's
//! write_trace_to_file), or `trace_<t>.bin`, the same as little-endian uint64 (its --trace-file-binary-type);
//! beside it, optionally, `size_trace_<t>.log`, how many of those rows each sample's bag pools
//! (fb_emb_trace_writer.py). Without sizes every row is a bag of its own. Tables are numbered from 0 and read
//! until the first number with no trace.
//!
//! Every byte is hostile until read: a token that is not a whole number, a row id at or past max_dlrm_rows (2^48),
//! bag sizes that do not add up to the rows looked up, a table with no lookup, tables with different numbers of
//! samples (bags; a table without sizes has one a row), or a directory with no trace_0 is refused with the file
//! and the field.
//!
//!   const auto trace = io::read_dlrm_trace("traces/criteo");   // trace_0.log, size_trace_0.log, trace_1.log, ...
//!   for (const auto& t : trace) embedding::bag_batch{t.indices, t.offsets};

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/detail/input_file.hpp>
#include <trinity/error.hpp>

namespace trinity::io {

//! One table's lookups: bag b pools rows indices[offsets[b] .. offsets[b + 1]), as embedding::bag_batch holds
//! them; `rows` is one past the largest row looked up.
struct dlrm_table_trace {
  std::string file;
  std::vector<std::uint64_t> indices;
  std::vector<std::size_t> offsets;
  std::uint64_t rows = 0;
  bool bags_given = false;  // a size trace gave the bags (else one a row)
  [[nodiscard]] std::size_t bags() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
};

//! The most rows a table read from a trace may have: 2^48, past any embedding table trained (the largest DLRM
//! tables hold about 10^10 rows). A row id at or above it is refused where it stands, so that no count sized
//! from the largest id read (one past it) can wrap around 2^64 to a table smaller than the ids it holds.
inline constexpr std::uint64_t max_dlrm_rows = std::uint64_t{1} << 48;

namespace detail {

// The whole numbers of a text trace, separated by commas and white space (the reference writes ", ").
inline std::vector<std::uint64_t> dlrm_numbers(std::string_view text, const std::string& file, std::string_view what) {
  std::vector<std::uint64_t> out;
  std::size_t at = 0;
  bool comma = true;  // a number may come next
  const auto separator = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  // The entry's name, built only for a refusal: a trace holds millions of numbers.
  const auto field = [&] { return file + ": " + std::string(what) + "[" + std::to_string(out.size()) + "]"; };
  while (at < text.size()) {
    const char c = text[at];
    if (separator(c)) {
      ++at;
      continue;
    }
    if (c == ',') {
      if (comma) throw invalid_input(field(), "is empty (two commas with no number between them, or a leading comma)");
      comma = true;
      ++at;
      continue;
    }
    if (!comma) throw invalid_input(field(), "follows the number before it with no comma; the trace writes \", \"");
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) throw invalid_input(field(), "is past the largest row, 2^64 - 1");
    if (ec != std::errc() || (end < text.data() + text.size() && !separator(*end) && *end != ','))
      throw invalid_input(field(), "is not a whole number: \"" +
                                       std::string(text.substr(at, std::min<std::size_t>(20, text.size() - at))) +
                                       "\"");
    out.push_back(v);
    at = static_cast<std::size_t>(end - text.data());
    comma = false;
  }
  if (comma && !out.empty()) throw invalid_input(field(), "is missing after the trace's last comma");
  return out;
}

}  // namespace detail

//! A table's rows looked up, from a text trace (`file` names it in a refusal).
inline std::vector<std::uint64_t> parse_dlrm_indices(std::string_view text, const std::string& file) {
  auto out = detail::dlrm_numbers(text, file, "indices");
  if (out.empty()) throw invalid_input(file, "holds no lookup");
  return out;
}

//! A table's rows looked up, from a binary trace: little-endian uint64, 8 bytes a row.
inline std::vector<std::uint64_t> parse_dlrm_indices_binary(std::string_view bytes, const std::string& file) {
  if (bytes.size() % 8 != 0)
    throw invalid_input(file, std::to_string(bytes.size()) +
                                  " bytes are not whole uint64 rows (8 bytes each). Fix: a text trace is named .log");
  if (bytes.empty()) throw invalid_input(file, "holds no lookup");
  std::vector<std::uint64_t> out(bytes.size() / 8);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint64_t v = 0;
    for (std::size_t b = 8; b-- > 0;) v = (v << 8) | static_cast<unsigned char>(bytes[i * 8 + b]);
    out[i] = v;
  }
  return out;
}

//! A table's trace: its rows, and bag sizes from `sizes` (the size trace's text) or, when it is empty, one bag a
//! row. The sizes must add up to the rows; a bag of size 0 pools nothing (an empty multi-hot feature).
inline dlrm_table_trace make_dlrm_table_trace(std::vector<std::uint64_t> indices, std::string_view sizes,
                                              const std::string& file, const std::string& sizes_file) {
  dlrm_table_trace t;
  t.file = file;
  t.indices = std::move(indices);
  for (std::size_t k = 0; k < t.indices.size(); ++k) {
    if (t.indices[k] >= max_dlrm_rows)
      throw invalid_input(file + ": indices[" + std::to_string(k) + "]",
                          "is row " + std::to_string(t.indices[k]) + ", past the most rows a table may have, 2^48 (" +
                              std::to_string(max_dlrm_rows) + "). Fix: row ids count from 0 within their table");
    t.rows = std::max(t.rows, t.indices[k] + 1);
  }
  t.offsets.push_back(0);
  if (sizes.empty()) {
    for (std::size_t i = 1; i <= t.indices.size(); ++i) t.offsets.push_back(i);
    return t;
  }
  t.bags_given = true;
  const auto n = detail::dlrm_numbers(sizes, sizes_file, "sizes");
  if (n.empty()) throw invalid_input(sizes_file, "holds no bag size");
  std::size_t total = 0;
  for (std::size_t b = 0; b < n.size(); ++b) {
    if (n[b] > t.indices.size() - total)
      throw invalid_input(sizes_file + ": sizes[" + std::to_string(b) + "]",
                          "takes the bags past the " + std::to_string(t.indices.size()) + " rows of " + file +
                              ". Fix: the size trace of the same table and samples");
    total += static_cast<std::size_t>(n[b]);
    t.offsets.push_back(total);
  }
  if (total != t.indices.size())
    throw invalid_input(sizes_file, "pools " + std::to_string(total) + " rows in all, but " + file + " looks up " +
                                        std::to_string(t.indices.size()) +
                                        ". Fix: the size trace of the same table and samples");
  return t;
}

//! Every table's trace in `directory`: trace_0, trace_1, ... (.log text or .bin uint64), each with its
//! size_trace_<t>.log when there is one, until the first table number with no trace.
inline std::vector<dlrm_table_trace> read_dlrm_trace(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(directory, ec))
    throw invalid_input(directory, "is not a directory. Fix: name the directory that holds trace_0.log (or .bin)");
  std::vector<dlrm_table_trace> out;
  for (std::size_t t = 0;; ++t) {
    const auto base = fs::path(directory) / ("trace_" + std::to_string(t));
    const std::string text = base.string() + ".log", binary = base.string() + ".bin";
    const bool has_text = fs::exists(text, ec), has_binary = fs::exists(binary, ec);
    if (!has_text && !has_binary) break;
    if (has_text && has_binary)
      throw invalid_input(directory, "holds both trace_" + std::to_string(t) + ".log and .bin. Fix: keep one");
    const std::string file = has_text ? text : binary;
    const auto raw = trinity::detail::read_input_file(file, trinity::detail::max_data_bytes);
    auto indices = has_text ? parse_dlrm_indices(raw, file) : parse_dlrm_indices_binary(raw, file);
    const std::string sizes_file = (fs::path(directory) / ("size_trace_" + std::to_string(t) + ".log")).string();
    std::string sizes;
    if (fs::exists(sizes_file, ec)) {
      sizes = trinity::detail::read_input_file(sizes_file, trinity::detail::max_data_bytes);
      if (sizes.find_first_not_of(" \t\r\n") == std::string::npos) throw invalid_input(sizes_file, "holds no bag size");
    }
    out.push_back(make_dlrm_table_trace(std::move(indices), sizes, file, sizes_file));
    // Every table pools one bag a sample (a trace without sizes, one row a bag): as many bags in each.
    if (out.size() > 1 && out.back().bags() != out.front().bags())
      throw invalid_input(file, "has " + std::to_string(out.back().bags()) + " samples where " + out.front().file +
                                    " has " + std::to_string(out.front().bags()) +
                                    ". Fix: every table's trace covers the same samples");
  }
  if (out.empty())
    throw invalid_input(directory,
                        "holds no trace_0.log or trace_0.bin. Fix: the DLRM reference writes "
                        "trace_<table>.log and size_trace_<table>.log");
  return out;
}

}  // namespace trinity::io
