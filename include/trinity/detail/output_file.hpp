#pragma once
//! \file
//! Writing a file a user named: whole or not at all, every failure named. The bytes go to a temporary file
//! beside the target, are flushed to the disk and closed with each step checked, and only then renamed over
//! the target, so a full disk, a missing folder or a crash leaves the old file (or none), never half of one,
//! and never a "wrote" for a file that was not written. A directory, a device (/dev/full), a FIFO or a path
//! whose folder is missing is refused before any work is done, as input_file.hpp refuses them as inputs.
//!
//!   trinity::detail::require_output_file("--points-out", path);   // before the work
//!   trinity::detail::output_file out("--points-out", path);
//!   out.stream() << rows;
//!   out.commit();                                                   // throws invalid_input("--points-out", why)

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include <trinity/error.hpp>

namespace trinity::detail {

//! Why `path` cannot be written as an output file, or nothing when it can be tried.
inline std::optional<std::string> output_file_problem(const std::string& path) {
  namespace fs = std::filesystem;
  if (path.empty()) return "an empty path; name a file";
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (st.type() == fs::file_type::directory) return path + " is a directory; name a file in it";
  if (st.type() != fs::file_type::not_found && st.type() != fs::file_type::regular && !ec)
    return path + " is not a regular file (a device, a FIFO or a socket); name a file";
  const fs::path folder = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  const auto fst = fs::status(folder, ec);
  if (fst.type() == fs::file_type::not_found)
    return "the folder " + folder.string() + " does not exist; create it first";
  if (fst.type() != fs::file_type::directory) return folder.string() + " is not a folder; name a file in a folder";
  if (::access(folder.c_str(), W_OK) != 0)
    return "the folder " + folder.string() + " cannot be written (" + std::strerror(errno) + "); name another";
  return std::nullopt;
}

//! Refuses, as invalid_input(field, why), a path output_file_problem finds wrong: called before the work whose
//! result it will hold, so that a bad --out is refused at once, not after a long run.
inline void require_output_file(std::string_view field, const std::string& path) {
  if (const auto problem = output_file_problem(path)) throw invalid_input(std::string(field), *problem);
}

//! A file being written: a temporary beside `path` (created with the user's umask) until commit() renames it
//! into place. Left uncommitted, the temporary is removed and `path` is untouched.
class output_file {
 public:
  output_file(std::string field, std::string path) : field_(std::move(field)), path_(std::move(path)) {
    require_output_file(field_, path_);
    static std::atomic<unsigned> serial{0};
    temp_ = path_ + ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(serial++);
    const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) fail("cannot be created");
    ::close(fd);
    out_.open(temp_, std::ios::binary | std::ios::trunc);
    if (!out_) fail("cannot be opened");
  }
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file() {
    if (!committed_) {
      out_.close();
      std::error_code ec;
      std::filesystem::remove(temp_, ec);
    }
  }

  [[nodiscard]] std::ostream& stream() noexcept { return out_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  //! Flushes, syncs and closes the temporary, then renames it over `path`; any failure throws, naming the file.
  void commit() {
    out_.flush();
    if (!out_) fail("could not be written (the disk is full?)");
    out_.close();
    if (out_.fail()) fail("could not be closed");
    const int fd = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!synced) fail("could not be flushed to the disk");
    if (::rename(temp_.c_str(), path_.c_str()) != 0) fail("could not be renamed into place");
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    const std::string reason = std::strerror(errno);
    out_.close();
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
    committed_ = true;  // nothing left to remove
    throw invalid_input(field_, path_ + " " + what + " (" + reason + "); nothing was written there");
  }

  std::string field_, path_, temp_;
  std::ofstream out_;
  bool committed_ = false;
};

//! `bytes` written to `path` whole or not at all (output_file); failures throw invalid_input(field, why).
inline void write_output_file(std::string_view field, const std::string& path, std::string_view bytes) {
  output_file out{std::string(field), path};
  out.stream().write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.commit();
}

}  // namespace trinity::detail
