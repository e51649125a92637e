#pragma once
//! \file
//! ack_journal: the consumer's durable record of what it has acknowledged, one
//! record per sample: (producer, offset, tag). A restarted consumer reads it
//! back to know, per producer, the offset it resumes from, and acknowledges
//! nothing twice; the tag is the application's own (a hash of the sample, where
//! its result went), so the journal can also serve as the delivery log.
//!
//! File: an 8-byte head ("TRNJ", version 1 as u32), then 32-byte records
//!   u32 producer, u32 magic "ACK1", u64 offset, u64 tag, u64 check
//! little-endian, check a mix of the other fields. A record is appended with
//! write(2), which a killed process does not undo; with sync on, fdatasync(2)
//! follows each flush, which a power cut does not undo either.
//!
//! The file is read as hostile: a short or unchecked *last* record is a write
//! torn by a crash and is cut off; a bad record anywhere else, a wrong head, or
//! offsets of a producer that do not run 0, 1, 2, ... is corruption, and
//! opening fails naming the file, the record and what is wrong.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <trinity/detail/input_file.hpp>
#include <trinity/detail/splitmix.hpp>
#include <trinity/error.hpp>
#include <trinity/stream/detail/frame.hpp>
#include <trinity/stream/stream_error.hpp>

namespace trinity::stream {

//! One acknowledged sample.
struct ack_record {
  std::uint32_t producer = 0;
  std::uint64_t offset = 0;
  std::uint64_t tag = 0;
  friend bool operator==(const ack_record&, const ack_record&) = default;
};

//! A journal that cannot be read: corruption, a wrong file or an I/O failure.
class journal_error : public stream_error {
 public:
  using stream_error::stream_error;
};

namespace detail {
inline constexpr std::size_t journal_head_bytes = 8;
inline constexpr std::size_t journal_record_bytes = 32;
inline constexpr std::uint32_t journal_record_magic = 0x314b4341;  // "ACK1"

inline std::uint64_t journal_check(std::uint32_t producer, std::uint64_t offset, std::uint64_t tag) noexcept {
  // splitmix64 over the fields: any flipped or torn byte changes it.
  return trinity::detail::splitmix64(trinity::detail::splitmix64(trinity::detail::splitmix64(producer) ^ offset) ^ tag);
}

[[noreturn]] inline void journal_fail(const std::filesystem::path& p, const std::string& what) {
  throw journal_error("ack journal " + p.string() + ": " + what);
}
// Opens `p` with `flags` where it is a regular file (or absent, with O_CREAT): a FIFO would block the open until
// a writer came, a device such as /dev/zero never ends. Opened without blocking, checked, then made blocking.
inline int open_regular(const std::filesystem::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) journal_fail(p, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    journal_fail(p, S_ISDIR(st.st_mode) ? "is a directory; name a file in it"
                                        : "is not a regular file (a FIFO, a device or a socket); name a file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}
}  // namespace detail

class ack_journal {
 public:
  //! Opens the journal at path, creating it when absent, and reads it back.
  //! sync: fdatasync after each flush (survives a power cut, not only a killed process).
  explicit ack_journal(std::filesystem::path path, bool sync = false) : path_(std::move(path)), sync_(sync) {
    fd_ = detail::open_regular(path_, O_RDWR | O_CREAT);
    try {
      recover();
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
  ack_journal(const ack_journal&) = delete;
  ack_journal& operator=(const ack_journal&) = delete;
  ~ack_journal() {
    try {
      flush();
    } catch (...) {  // a destructor cannot report; flush() explicitly to see the error
    }
    ::close(fd_);
  }

  //! The offset the producer resumes from: how many of its samples are acknowledged.
  [[nodiscard]] std::uint64_t next(std::uint32_t producer) const {
    auto it = next_.find(producer);
    return it == next_.end() ? 0 : it->second;
  }
  [[nodiscard]] const std::map<std::uint32_t, std::uint64_t>& positions() const noexcept { return next_; }
  //! Records cut off when the journal was opened (a write torn by a crash).
  [[nodiscard]] std::size_t torn_records_dropped() const noexcept { return torn_; }

  //! Appends a record; offset must be next(producer). Buffered until flush().
  void append(std::uint32_t producer, std::uint64_t offset, std::uint64_t tag) {
    auto& n = next_[producer];
    if (offset != n)
      throw invalid_input("offset", "producer " + std::to_string(producer) + " acknowledges offset " +
                                        std::to_string(offset) + " but " + std::to_string(n) +
                                        " is its next unacknowledged one: acknowledge in order");
    ++n;
    std::byte rec[detail::journal_record_bytes];
    detail::store_u32(rec, producer);
    detail::store_u32(rec + 4, detail::journal_record_magic);
    detail::store_u64(rec + 8, offset);
    detail::store_u64(rec + 16, tag);
    detail::store_u64(rec + 24, detail::journal_check(producer, offset, tag));
    pending_.insert(pending_.end(), rec, rec + sizeof rec);
  }

  //! Writes what append() buffered; fdatasync too when opened with sync.
  void flush() {
    std::size_t done = 0;
    while (done < pending_.size()) {
      const auto n = ::write(fd_, pending_.data() + done, pending_.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        detail::journal_fail(path_, std::string("write failed: ") + std::strerror(errno));
      }
      done += static_cast<std::size_t>(n);
    }
    pending_.clear();
    if (sync_ && done > 0 && ::fdatasync(fd_) != 0)
      detail::journal_fail(path_, std::string("fdatasync failed: ") + std::strerror(errno));
  }

  //! Every record of the journal at path, in order, read as the constructor reads it (torn tail cut off).
  [[nodiscard]] static std::vector<ack_record> read(const std::filesystem::path& path) {
    return records_of(slurp(path), path);
  }
  //! The records of a journal's bytes, read as hostile (tests/fuzz/fuzz_reader_journal.cpp); `name` names it.
  [[nodiscard]] static std::vector<ack_record> records_of(const std::vector<std::byte>& bytes,
                                                          const std::filesystem::path& name) {
    std::vector<ack_record> out;
    std::size_t torn = 0;
    std::map<std::uint32_t, std::uint64_t> next;
    parse(name, bytes, out, next, torn);
    return out;
  }

 private:
  static std::vector<std::byte> slurp(const std::filesystem::path& path) {
    std::vector<std::byte> bytes;
    const int fd = detail::open_regular(path, O_RDONLY);
    std::byte buf[1 << 16];
    for (;;) {
      const auto n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        ::close(fd);
        detail::journal_fail(path, std::string("read failed: ") + std::strerror(errno));
      }
      if (n == 0) break;
      if (bytes.size() + static_cast<std::size_t>(n) > trinity::detail::max_data_bytes) {
        ::close(fd);
        detail::journal_fail(path, "holds more than " + std::to_string(trinity::detail::max_data_bytes) +
                                       " bytes, more than any journal; is it the right file?");
      }
      bytes.insert(bytes.end(), buf, buf + n);
    }
    ::close(fd);
    return bytes;
  }

  //! Parses bytes; returns the length of the valid prefix (head plus whole, checked records).
  static std::size_t parse(const std::filesystem::path& path, const std::vector<std::byte>& b,
                           std::vector<ack_record>& out, std::map<std::uint32_t, std::uint64_t>& next,
                           std::size_t& torn) {
    constexpr char head_magic[4] = {'T', 'R', 'N', 'J'};
    if (b.size() < detail::journal_head_bytes) {
      // A head torn by a crash before any record: only a prefix of a real head is accepted.
      for (std::size_t i = 0; i < b.size() && i < 4; ++i)
        if (static_cast<char>(b[i]) != head_magic[i]) detail::journal_fail(path, "not an ack journal (bad head)");
      torn = b.empty() ? 0 : 1;
      return 0;
    }
    if (std::memcmp(b.data(), head_magic, 4) != 0) detail::journal_fail(path, "not an ack journal (bad head)");
    if (detail::load_u32(b.data() + 4) != 1)
      detail::journal_fail(
          path, "version " + std::to_string(detail::load_u32(b.data() + 4)) + " is not one this trinity reads (1)");
    const std::size_t body = b.size() - detail::journal_head_bytes;
    const std::size_t whole = body / detail::journal_record_bytes;
    torn = body % detail::journal_record_bytes == 0 ? 0 : 1;
    std::size_t valid = whole;
    for (std::size_t i = 0; i < whole; ++i) {
      const std::byte* r = b.data() + detail::journal_head_bytes + i * detail::journal_record_bytes;
      ack_record rec{detail::load_u32(r), detail::load_u64(r + 8), detail::load_u64(r + 16)};
      const bool ok = detail::load_u32(r + 4) == detail::journal_record_magic &&
                      detail::load_u64(r + 24) == detail::journal_check(rec.producer, rec.offset, rec.tag);
      if (!ok) {
        if (i + 1 == whole && torn == 0) {  // the last record, torn by a crash
          valid = i;
          torn = 1;
          break;
        }
        detail::journal_fail(path, "record " + std::to_string(i) + " is corrupt (its check does not match)");
      }
      auto& n = next[rec.producer];
      if (rec.offset != n)
        detail::journal_fail(path, "record " + std::to_string(i) + " acknowledges producer " +
                                       std::to_string(rec.producer) + " offset " + std::to_string(rec.offset) +
                                       " where " + std::to_string(n) + " was next: the journal is corrupt");
      ++n;
      out.push_back(rec);
    }
    return detail::journal_head_bytes + valid * detail::journal_record_bytes;
  }

  void recover() {
    const auto bytes = slurp(path_);
    std::vector<ack_record> records;
    const std::size_t valid = parse(path_, bytes, records, next_, torn_);
    if (valid < bytes.size() || bytes.empty()) {
      if (::ftruncate(fd_, static_cast<off_t>(valid)) != 0)
        detail::journal_fail(path_, std::string("cannot cut off a torn record: ") + std::strerror(errno));
    }
    if (::lseek(fd_, static_cast<off_t>(valid), SEEK_SET) < 0)
      detail::journal_fail(path_, std::string("seek failed: ") + std::strerror(errno));
    if (valid == 0) {
      const std::byte head[detail::journal_head_bytes] = {std::byte{'T'}, std::byte{'R'}, std::byte{'N'},
                                                          std::byte{'J'}, std::byte{1},   std::byte{0},
                                                          std::byte{0},   std::byte{0}};
      pending_.assign(head, head + sizeof head);
      flush();
    }
  }

  std::filesystem::path path_;
  bool sync_ = false;
  int fd_ = -1;
  std::map<std::uint32_t, std::uint64_t> next_;
  std::vector<std::byte> pending_;
  std::size_t torn_ = 0;
};

}  // namespace trinity::stream
