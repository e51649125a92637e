#pragma once
//! \file
//! Reading a file a user named: only a regular file, whole, up to a size, or a
//! refusal naming the path and what it is instead. A directory opens as an
//! ifstream on Linux and fails only on the first read, a FIFO blocks until a
//! writer comes, /dev/zero never ends: each is refused before it is opened.
//!
//!   const std::string text = trinity::detail::read_input_file(path, 64 << 20);

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>

#include <trinity/error.hpp>

namespace trinity::detail {

//! Why `path` cannot be read as an input file, or nothing when it is a regular file.
inline std::optional<std::string> input_file_problem(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || st.type() == std::filesystem::file_type::not_found) return "cannot be read: no such file";
  if (st.type() == std::filesystem::file_type::directory) return "is a directory; name a file in it";
  if (st.type() != std::filesystem::file_type::regular)
    return "is not a regular file (a FIFO, a device or a socket); name a file";
  return std::nullopt;
}

//! The whole file, refused with invalid_input(path, why) when it is not a regular file, cannot be read (it may
//! have vanished since it was named) or holds more than `most` bytes.
inline std::string read_input_file(const std::string& path, std::size_t most) {
  if (const auto problem = input_file_problem(path)) throw invalid_input(path, *problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw invalid_input(path, "cannot be read");
  std::string out;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    const auto got = static_cast<std::size_t>(in.gcount());
    if (out.size() + got > most)
      throw invalid_input(path, "holds more than " + std::to_string(most) +
                                    " bytes, more than any input of its "
                                    "kind; is it the right file?");
    out.append(buffer, got);
  }
  if (in.bad()) throw invalid_input(path, "cannot be read");
  return out;
}

//! The largest JSON input (a system, workload, topology, profile or runs file) trinity reads.
inline constexpr std::size_t max_json_bytes = std::size_t{64} << 20;
//! The largest trace or vector file: a request trace or an embeddings matrix of a few GB.
inline constexpr std::size_t max_data_bytes = std::size_t{16} << 30;

}  // namespace trinity::detail
