#pragma once
//! \file
//! Reading a block-hashed request trace in Mooncake's format (FAST'25 release,
//! kvcache-ai/Mooncake: FAST25-release/traces/*.jsonl): one JSON object a line,
//!
//!   {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, 1, 2, ...]}
//!
//! timestamp in milliseconds, lengths in tokens, hash_ids the prompt's chain
//! of block_tokens-token blocks. Every line is hostile until read: an unknown
//! or missing key, a number out of range, a chain whose length does not cover
//! input_length in whole blocks, or an id that follows a different block than
//! it did before (ids name prefixes, so one id has one parent) is refused with
//! the line and the field. Blank lines are skipped.
//!
//!   const auto trace = io::read_block_trace("../shared/traces/mooncake_conversation_trace.jsonl");

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <trinity/cache/block_replay.hpp>
#include <trinity/detail/input_file.hpp>
#include <trinity/error.hpp>
#include <trinity/io/json_object.hpp>

namespace trinity::io {

//! The requests of a trace's text, in order; `file` names it in a refusal, `block_tokens` is the trace's block
//! size (Mooncake's: 512). Every byte is read as hostile (tests/fuzz/fuzz_reader_mooncake.cpp).
inline std::vector<cache::block_request> parse_block_trace(std::string_view text, const std::string& file,
                                                           std::size_t block_tokens = 512) {
  trinity::detail::require(block_tokens >= 1, "block_tokens", "must be at least 1");
  std::istringstream in{std::string(text)};
  static constexpr key keys[] = {
      {"timestamp", required}, {"input_length", required}, {"output_length", required}, {"hash_ids", required}};
  std::vector<cache::block_request> out;
  // Each id's parent, the id before it in its chain (none: the chain's first block).
  constexpr std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  std::unordered_map<cache::token, std::uint64_t> parent;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = file + ":" + std::to_string(number);
    try {
      const json j = parse(line, where);
      const object o(j, "", keys, "a request");
      cache::block_request q;
      q.timestamp_ms = o.count("timestamp");
      q.input_length = o.count("input_length", std::uint64_t{1} << 40);
      q.output_length = o.count("output_length", std::uint64_t{1} << 40);
      for_each(o.at("hash_ids"), "hash_ids", [&](const json& v, const std::string& path) {
        q.hash_ids.push_back(static_cast<cache::token>(count(v, path, std::numeric_limits<cache::token>::max())));
      });
      const std::uint64_t n = q.hash_ids.size();
      if (n == 0 || n != (q.input_length + block_tokens - 1) / block_tokens)
        fail("hash_ids", std::to_string(n) + " blocks do not hold input_length " + std::to_string(q.input_length) +
                             " tokens in whole " + std::to_string(block_tokens) + "-token blocks (" +
                             std::to_string((q.input_length + block_tokens - 1) / block_tokens) +
                             " expected). Fix: give the trace's block size, or repair the line");
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t before = i ? q.hash_ids[i - 1] : first;
        const auto [it, fresh] = parent.try_emplace(q.hash_ids[i], before);
        if (!fresh && it->second != before)
          fail(index("hash_ids", i), "block " + std::to_string(q.hash_ids[i]) + " follows " +
                                         (before == first ? std::string("nothing") : std::to_string(before)) +
                                         " here but " +
                                         (it->second == first ? std::string("nothing") : std::to_string(it->second)) +
                                         " earlier: an id names a prefix, so it has one parent");
      }
      out.push_back(std::move(q));
    } catch (const invalid_input& e) {
      if (e.field().starts_with(where)) throw;
      throw invalid_input(where + ": " + e.field(), e.problem());
    }
  }
  if (in.bad()) throw invalid_input(file, "cannot be read");
  if (out.empty()) throw invalid_input(file, "holds no request");
  return out;
}

//! The trace's requests, in file order; `block_tokens` is the trace's block size (Mooncake's: 512).
inline std::vector<cache::block_request> read_block_trace(const std::string& file, std::size_t block_tokens = 512) {
  return parse_block_trace(trinity::detail::read_input_file(file, trinity::detail::max_data_bytes), file, block_tokens);
}

}  // namespace trinity::io
