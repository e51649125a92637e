#pragma once
//! \file
//! A checkpoint directory that is whole or absent, and says what it holds. Its pieces (whatever files the ranks
//! write: shard::write_checkpoint_piece's rank files, a trainer's stage and expert directories) are written into a
//! staging directory beside it, `<parent>/.<name>.saving`; once every piece is there, one rank writes the
//! manifest and swaps the staging directory into place in one rename (renameat2's RENAME_EXCHANGE), then removes
//! the previous checkpoint. A run killed at any point leaves the previous checkpoint whole and loadable.
//!
//! The manifest, `<dir>/checkpoint.manifest`, is text, a line each:
//!
//!   trinity-checkpoint 1
//!   world_size 4
//!   step 12
//!   iteration 12
//!   layout pp=2,vpp=1,tp=1
//!   piece <bytes> <FNV-1a 64, 16 hex digits> <relative path>      (one line a piece, in path order)
//!   checksum <FNV-1a 64 of every line above>
//!
//! verify_checkpoint reads it as hostile and refuses a directory whose pieces are missing, extra (another run's,
//! another world size's), of another size or whose checksum fails, naming the piece and the fix; a caller then
//! compares the pieces' own step with the manifest's.

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <trinity/detail/input_file.hpp>
#include <trinity/error.hpp>
#include <trinity/shard/checkpoint_manifest.hpp>

namespace trinity::shard {

namespace detail {

// A file's size and FNV-1a, read whole. Where `sync`, the file is flushed to the disk first, so that a manifest
// never names a piece a power cut could still lose.
inline checkpoint_manifest::piece piece_of(const std::filesystem::path& dir, const std::string& rel, bool sync) {
  const auto file = (dir / rel).string();
  if (sync) {
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    const int error = errno;
    if (fd >= 0) ::close(fd);
    if (!synced)
      throw invalid_input("checkpoint", file + " cannot be flushed to the disk (" + std::strerror(error) + ")");
  }
  const std::string bytes = trinity::detail::read_input_file(file, trinity::detail::max_data_bytes);
  return {rel, bytes.size(), fnv1a_64(bytes)};
}

// Every entry under dir but the manifest and the staging marker, relative and sorted: regular files into `files`,
// anything else (a folder holding no file, a link, a FIFO) into `others`; folders that hold files into neither.
inline void walk(const std::filesystem::path& dir, std::vector<std::string>& files, std::vector<std::string>& others) {
  namespace fs = std::filesystem;
  std::vector<std::string> folders;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().lexically_relative(dir).generic_string();
    if (rel == manifest_name || rel == staging_marker) continue;
    const auto type = it->symlink_status().type();
    if (type == fs::file_type::regular)
      files.push_back(rel);
    else if (type == fs::file_type::directory)
      folders.push_back(rel);
    else
      others.push_back(rel);
    if (files.size() + folders.size() + others.size() > max_pieces)
      throw invalid_input("checkpoint", dir.string() + " holds more than " + std::to_string(max_pieces) + " entries");
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : folders) {  // a folder holds a file where the first path after "f/" starts with it
    const auto first = std::lower_bound(files.begin(), files.end(), f + "/");
    if (first == files.end() || !first->starts_with(f + "/")) others.push_back(f + "/");
  }
  std::sort(others.begin(), others.end());
}

}  // namespace detail

//! Where the pieces of `dir`'s next checkpoint are written before commit_checkpoint moves them into place.
inline std::filesystem::path checkpoint_staging(const std::filesystem::path& dir) {
  const auto clean = dir.lexically_normal();
  const auto name = clean.has_filename() ? clean.filename() : clean.parent_path().filename();
  const auto parent = clean.has_filename() ? clean.parent_path() : clean.parent_path().parent_path();
  return parent / ("." + name.string() + ".saving");
}

//! Prepares the staging directory of a checkpoint to be saved into `dir` (one rank calls it). `dir` may be absent,
//! empty or a checkpoint (a manifest at its top, which the save replaces); anything else is refused, so no save
//! removes files that are not a checkpoint's. A staging directory left by a killed save is removed.
inline void begin_checkpoint(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto st = fs::symlink_status(dir, ec);
  if (st.type() == fs::file_type::directory) {
    if (!fs::is_empty(dir) && !fs::exists(dir / detail::manifest_name))
      throw invalid_input("checkpoint", dir.string() +
                                            " holds files but no checkpoint.manifest: it is not a checkpoint this "
                                            "library wrote (or one written before manifests), and a save would "
                                            "replace it. Fix: save into a new or empty directory");
  } else if (st.type() != fs::file_type::not_found) {
    throw invalid_input("checkpoint", dir.string() + " exists and is not a directory. Fix: name a directory");
  }
  const auto staging = checkpoint_staging(dir);
  if (fs::exists(fs::symlink_status(staging, ec))) {
    if (!fs::is_directory(fs::symlink_status(staging)) ||
        (!fs::exists(staging / detail::staging_marker) && !fs::exists(staging / detail::manifest_name)))
      throw invalid_input("checkpoint", staging.string() +
                                            " is in the way of the save's staging directory and is not one. Fix: "
                                            "move it");
    fs::remove_all(staging);
  }
  fs::create_directories(staging);
  std::ofstream(staging / detail::staging_marker) << "a trinity checkpoint being saved\n";
}

//! Lists the staging directory's files into `m.pieces` (with their sizes and checksums, each synced to the
//! disk), writes the manifest and swaps the staging directory into `dir` in one rename; the previous checkpoint
//! is removed after. One rank calls it, once every rank's pieces are written.
inline void commit_checkpoint(const std::filesystem::path& dir, checkpoint_manifest m) {
  namespace fs = std::filesystem;
  const auto staging = checkpoint_staging(dir);
  trinity::detail::require(m.layout.find_first_of(" \n") == std::string::npos && !m.layout.empty(), "checkpoint.layout",
                           "must be one word, no spaces");
  std::vector<std::string> files, others;
  detail::walk(staging, files, others);
  m.pieces.clear();
  for (const auto& f : files) {
    trinity::detail::require(detail::safe_piece_path(f), "checkpoint", "a piece named " + f + " cannot be listed");
    m.pieces.push_back(detail::piece_of(staging, f, /*sync=*/true));
  }
  const auto manifest = staging / detail::manifest_name;
  {
    std::ofstream out(manifest, std::ios::binary | std::ios::trunc);
    out << to_text(m);
    out.close();
    const int fd = ::open(manifest.c_str(), O_RDONLY | O_CLOEXEC);
    const bool synced = fd >= 0 && ::fsync(fd) == 0;
    if (fd >= 0) ::close(fd);
    if (!out || !synced) throw invalid_input("checkpoint", manifest.string() + " could not be written (disk full?)");
  }
  fs::remove(staging / detail::staging_marker);
  if (!fs::exists(fs::symlink_status(dir))) {
    fs::rename(staging, dir);
  } else if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
    // A file system without the exchange (EINVAL): the old one aside, the new one in; a crash between the two
    // renames leaves both, by name, for the refusal below to point at.
    if (errno != EINVAL && errno != ENOSYS)
      throw invalid_input("checkpoint",
                          "cannot move " + staging.string() + " into place (" + std::strerror(errno) + ")");
    const auto aside = fs::path(staging).concat(".previous");
    fs::remove_all(aside);
    fs::rename(dir, aside);
    fs::rename(staging, dir);
    fs::remove_all(aside);
    return;
  }
  fs::remove_all(staging);  // the previous checkpoint, exchanged out
}

//! The manifest of the checkpoint in `dir`, read and checked on its own (verify_checkpoint checks the pieces).
inline checkpoint_manifest read_checkpoint_manifest(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const auto manifest = dir / detail::manifest_name;
  if (!fs::is_directory(dir))
    throw invalid_input("checkpoint", dir.string() + " is not a directory holding a checkpoint");
  if (!fs::exists(fs::symlink_status(manifest)))
    throw invalid_input("checkpoint.manifest",
                        dir.string() +
                            " holds no checkpoint.manifest: a save that did not finish, or a checkpoint "
                            "written before manifests, whose pieces cannot be trusted. Fix: load a "
                            "complete checkpoint, or save this run again");
  return parse_checkpoint_manifest(trinity::detail::read_input_file(manifest.string(), detail::max_manifest_bytes),
                                   manifest.string());
}

//! The manifest of the checkpoint in `dir`, after checking every piece it names against the disk: present, a
//! regular file, of its size and checksum, and nothing else beside them. Refused with invalid_input naming the
//! piece and the fix. A caller compares the pieces' own step and world size with the manifest's.
inline checkpoint_manifest verify_checkpoint(const std::filesystem::path& dir) {
  const auto m = read_checkpoint_manifest(dir);
  std::vector<std::string> files, others;
  detail::walk(dir, files, others);
  const auto named = [&](const std::string& f) {
    return std::binary_search(m.pieces.begin(), m.pieces.end(), checkpoint_manifest::piece{f, 0, 0},
                              [](const auto& a, const auto& b) { return a.path < b.path; });
  };
  for (const auto& f : files)
    if (!named(f))
      throw invalid_input("checkpoint.pieces", (dir / f).string() +
                                                   " is not among the pieces its manifest names (another run's, or "
                                                   "another world size's). Fix: remove it, or load another checkpoint");
  if (!others.empty())
    throw invalid_input("checkpoint.pieces",
                        (dir / others.front()).string() + " is neither a piece nor a folder of pieces. Fix: remove it");
  for (const auto& p : m.pieces) {
    const auto file = dir / p.path;
    if (!std::binary_search(files.begin(), files.end(), p.path))
      throw invalid_input("checkpoint.pieces", file.string() +
                                                   " is missing: its manifest names it. Fix: restore it from where "
                                                   "the checkpoint was copied, or load another checkpoint");
    const auto found = detail::piece_of(dir, p.path, /*sync=*/false);
    if (found.bytes != p.bytes)
      throw invalid_input("checkpoint.pieces", file.string() + " holds " + std::to_string(found.bytes) +
                                                   " bytes where its manifest says " + std::to_string(p.bytes) +
                                                   ": it is truncated or replaced. Fix: load another checkpoint");
    if (found.checksum != p.checksum)
      throw invalid_input("checkpoint.pieces", file.string() +
                                                   " fails its manifest's checksum: it is corrupt or another run's. "
                                                   "Fix: load another checkpoint");
  }
  return m;
}

}  // namespace trinity::shard
