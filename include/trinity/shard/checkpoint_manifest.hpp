#pragma once
//! \file
//! A checkpoint's manifest: what a checkpoint directory says of itself (who wrote it, at which step, split how)
//! and every file it holds with its size and checksum. Text, a line each, so that a person can read it:
//!
//!   trinity-checkpoint 1
//!   world_size 4
//!   step 12
//!   iteration 12
//!   layout pp=2,vpp=1,tp=1
//!   piece <bytes> <FNV-1a 64 of the file, 16 hex digits> <path relative to the directory>   (in path order)
//!   checksum <FNV-1a 64 of every line above, 16 hex digits>
//!
//! parse_checkpoint_manifest reads it as hostile: every line in its place, every number whole and in range, every
//! path relative and plain, the pieces in strict order, the checksum right; anything else is refused with the
//! line. shard/checkpoint_directory.hpp writes it and checks the files against it.

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::shard {

//! What a checkpoint says of itself.
struct checkpoint_manifest {
  struct piece {
    std::string path;  //!< relative to the checkpoint directory, '/' between folders
    std::uint64_t bytes = 0;
    std::uint64_t checksum = 0;  //!< FNV-1a 64 of the file's bytes
    friend bool operator==(const piece&, const piece&) = default;
  };
  std::uint32_t world_size = 0;  //!< the ranks that wrote it
  std::uint64_t step = 0;        //!< optimizer steps its states have taken
  std::uint64_t iteration = 0;   //!< the loop's position: its steps, skipped ones included
  std::string layout;            //!< how the writer split the model, in its own words (one word)
  std::vector<piece> pieces;     //!< every file, sorted by path
};

namespace detail {

inline constexpr std::string_view manifest_name = "checkpoint.manifest";
inline constexpr std::string_view staging_marker = "checkpoint.saving";
inline constexpr std::size_t max_manifest_bytes = std::size_t{64} << 20;
inline constexpr std::size_t max_pieces = std::size_t{1} << 20;
inline constexpr std::uint64_t max_piece_bytes = std::uint64_t{1} << 44;
inline constexpr std::uint32_t max_world_size = 1u << 24;

inline std::uint64_t fnv1a_64(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ull) noexcept {
  for (const char b : bytes) h = (h ^ static_cast<unsigned char>(b)) * 0x100000001b3ull;
  return h;
}

inline std::string hex16(std::uint64_t v) {
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = "0123456789abcdef"[v & 15];
  return s;
}

//! A piece's path as a manifest may name it: relative, no empty, "." or ".." part, printable, no space, and
//! neither of the directory's own files.
inline bool safe_piece_path(std::string_view p) {
  if (p.empty() || p.size() > 4096 || p.front() == '/' || p == manifest_name || p == staging_marker) return false;
  for (const char ch : p)
    if (const auto c = static_cast<unsigned char>(ch); c <= 0x20 || c >= 0x7f) return false;
  std::size_t at = 0;
  while (at <= p.size()) {
    const auto slash = std::min(p.find('/', at), p.size());
    const auto part = p.substr(at, slash - at);
    if (part.empty() || part == "." || part == "..") return false;
    at = slash + 1;
  }
  return true;
}

//! A whole number written plainly (digits only, no sign, no leading zero but 0 itself), at most `most`.
inline bool plain_number(std::string_view s, std::uint64_t most, std::uint64_t& out) {
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s.front() == '0')) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size() && out <= most;
}

inline bool hex_number(std::string_view s, std::uint64_t& out) {
  if (s.size() != 16 || s.find_first_not_of("0123456789abcdef") != std::string_view::npos) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace detail

//! The manifest as text.
inline std::string to_text(const checkpoint_manifest& m) {
  std::string body = "trinity-checkpoint 1\nworld_size " + std::to_string(m.world_size) + "\nstep " +
                     std::to_string(m.step) + "\niteration " + std::to_string(m.iteration) + "\nlayout " + m.layout +
                     "\n";
  for (const auto& p : m.pieces)
    body += "piece " + std::to_string(p.bytes) + " " + detail::hex16(p.checksum) + " " + p.path + "\n";
  return body + "checksum " + detail::hex16(detail::fnv1a_64(body)) + "\n";
}

//! The manifest in `text`, every byte read as hostile; `name` names the file in a refusal, which is an
//! invalid_input on field checkpoint.manifest naming the line.
inline checkpoint_manifest parse_checkpoint_manifest(std::string_view text, const std::string& name) {
  const auto refuse = [&](std::size_t line, const std::string& why) {
    return invalid_input("checkpoint.manifest", name + ":" + std::to_string(line) + ": " + why +
                                                    ": the manifest is damaged. Fix: load another checkpoint");
  };
  if (text.size() > detail::max_manifest_bytes) throw refuse(1, "larger than any manifest");
  if (text.empty() || text.back() != '\n') throw refuse(1, "does not end with its checksum line");
  // The body is every line before the last; the last is its checksum.
  const auto last = text.size() >= 2 ? text.rfind('\n', text.size() - 2) : std::string_view::npos;
  const std::string_view body = last == std::string_view::npos ? std::string_view{} : text.substr(0, last + 1);
  const std::string_view tail = text.substr(body.size(), text.size() - body.size() - 1);
  const auto lines = static_cast<std::size_t>(std::count(body.begin(), body.end(), '\n')) + 1;
  std::uint64_t sum = 0;
  if (!tail.starts_with("checksum ") || !detail::hex_number(tail.substr(9), sum))
    throw refuse(lines, "the last line is not `checksum <16 hex digits>`");
  if (sum != detail::fnv1a_64(body)) throw refuse(lines, "the checksum does not match the lines above it");

  checkpoint_manifest m;
  std::size_t at = 0, line = 0;
  const auto next = [&](std::string_view key) {
    ++line;
    const auto end = body.find('\n', at);
    if (end == std::string_view::npos) throw refuse(line, "ends before its `" + std::string(key) + "` line");
    const auto l = body.substr(at, end - at);
    at = end + 1;
    if (!key.empty() && (!l.starts_with(key) || l.size() == key.size() || l[key.size()] != ' '))
      throw refuse(line, "expected `" + std::string(key) + " ...`");
    return key.empty() ? l : l.substr(key.size() + 1);
  };
  const auto number = [&](std::string_view key, std::uint64_t most) {
    std::uint64_t v = 0;
    if (const auto text_of = next(key); !detail::plain_number(text_of, most, v))
      throw refuse(line, std::string(key) + " is not a whole number from 0 to " + std::to_string(most));
    return v;
  };
  if (next("") != "trinity-checkpoint 1") throw refuse(1, "not a trinity checkpoint manifest, version 1");
  m.world_size = static_cast<std::uint32_t>(number("world_size", detail::max_world_size));
  if (m.world_size == 0) throw refuse(line, "world_size is 0");
  m.step = number("step", std::uint64_t{1} << 40);
  m.iteration = number("iteration", std::uint64_t{1} << 40);
  m.layout = std::string(next("layout"));
  if (m.layout.find_first_of(" \t\r") != std::string::npos) throw refuse(line, "the layout is not one word");
  while (at < body.size()) {
    const auto fields = next("piece");
    const auto a = fields.find(' '), b = a == std::string_view::npos ? a : fields.find(' ', a + 1);
    checkpoint_manifest::piece p;
    if (b == std::string_view::npos || !detail::plain_number(fields.substr(0, a), detail::max_piece_bytes, p.bytes) ||
        !detail::hex_number(fields.substr(a + 1, b - a - 1), p.checksum))
      throw refuse(line, "expected `piece <bytes> <16 hex digits> <path>`");
    p.path = std::string(fields.substr(b + 1));
    if (!detail::safe_piece_path(p.path)) throw refuse(line, "the piece's path is not a plain relative path");
    if (!m.pieces.empty() && !(m.pieces.back().path < p.path))
      throw refuse(line, "the pieces are not in strict path order (one named twice?)");
    if (m.pieces.size() >= detail::max_pieces) throw refuse(line, "more pieces than any checkpoint holds");
    m.pieces.push_back(std::move(p));
  }
  if (m.pieces.empty()) throw refuse(line, "names no piece");
  return m;
}

}  // namespace trinity::shard
