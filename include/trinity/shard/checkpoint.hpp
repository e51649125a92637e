#pragma once
//! \file
//! Sharded checkpoints: every rank writes only its chunk of every layer
//! (parameters and optimizer state planes) to `<dir>/rank-<r>-of-<n>.ckpt`,
//! the whole saved at once beside a manifest (checkpoint_directory.hpp),
//! and a run with any other number of ranks loads them by reading, from each
//! old file, just the ranges its new chunks overlap. So a run saved on 4 ranks
//! continues on 2 or 3.
//!
//! File: a header ("TRNCKPT1", version, ranks, rank, steps taken, states per
//! parameter, layer count, layer sizes), then per layer its parameter chunk
//! and state planes (fp32, little-endian), then an FNV-1a 64 checksum of
//! everything before it. A file is written beside its final name and renamed,
//! so a crash mid-write leaves the previous checkpoint whole. Loading checks
//! every field against the model and names the file and field it rejects.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <trinity/comm/agreed.hpp>
#include <trinity/comm/partition.hpp>
#include <trinity/concepts/communicator.hpp>
#include <trinity/detail/input_file.hpp>
#include <trinity/error.hpp>
#include <trinity/shard/checkpoint_directory.hpp>
#include <trinity/shard/layer_values.hpp>

namespace trinity::shard {

static_assert(std::endian::native == std::endian::little, "trinity: checkpoints are written little-endian");

namespace detail {

inline constexpr char checkpoint_magic[8] = {'T', 'R', 'N', 'C', 'K', 'P', 'T', '1'};
inline constexpr std::uint32_t checkpoint_version = 1;

struct fnv1a {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(const void* p, std::size_t n) noexcept {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  }
};

inline std::filesystem::path checkpoint_file(const std::filesystem::path& dir, int rank, int ranks) {
  return dir / ("rank-" + std::to_string(rank) + "-of-" + std::to_string(ranks) + ".ckpt");
}

struct checkpoint_header {
  std::uint32_t ranks = 0, rank = 0;
  std::uint64_t steps = 0;
  std::uint32_t states_per = 0;
  std::vector<std::uint64_t> layer_sizes;

  [[nodiscard]] std::size_t bytes() const noexcept { return 8 + 4 + 4 + 4 + 8 + 4 + 4 + 8 * layer_sizes.size(); }
};

}  // namespace detail

//! Writes this rank's chunks into `dir` as one piece, `rank-<r>-of-<n>.ckpt`: the raw write that save_checkpoint
//! (and a trainer that saves several data_parallels into one checkpoint) runs inside a staging directory. Every
//! rank of the run calls it with the same directory.
template <class DataParallel, class Comm>
void write_checkpoint_piece(const std::filesystem::path& dir, const DataParallel& dp, const Comm& c) {
  std::filesystem::create_directories(dir);
  const auto final_name = detail::checkpoint_file(dir, c.rank(), c.size());
  const auto temp_name = std::filesystem::path(final_name).concat(".partial");
  std::vector<char> out;
  const auto put = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const char*>(p);
    out.insert(out.end(), b, b + n);
  };
  const auto put32 = [&](std::uint32_t v) { put(&v, 4); };
  const auto put64 = [&](std::uint64_t v) { put(&v, 8); };
  put(detail::checkpoint_magic, 8);
  put32(detail::checkpoint_version);
  put32(static_cast<std::uint32_t>(c.size()));
  put32(static_cast<std::uint32_t>(c.rank()));
  put64(static_cast<std::uint64_t>(dp.steps_taken()));
  put32(static_cast<std::uint32_t>(dp.states_per_parameter()));
  put32(static_cast<std::uint32_t>(dp.layers()));
  for (std::size_t l = 0; l < dp.layers(); ++l) put64(dp.partition(l).count);
  for (std::size_t l = 0; l < dp.layers(); ++l) {
    const auto ch = dp.owned_chunk(l);
    put(ch.parameters.data(), ch.parameters.size() * sizeof(float));
    put(ch.states.data(), ch.states.size() * sizeof(float));
  }
  detail::fnv1a sum;
  sum.add(out.data(), out.size());
  put64(sum.h);
  {
    std::ofstream f(temp_name, std::ios::binary | std::ios::trunc);
    if (!f) throw invalid_input("checkpoint", "cannot write " + temp_name.string() + ": check the directory");
    f.write(out.data(), static_cast<std::streamsize>(out.size()));
    f.flush();
    if (!f) throw invalid_input("checkpoint", "writing " + temp_name.string() + " failed (disk full?)");
  }
  std::filesystem::rename(temp_name, final_name);
}

//! Saves every rank's chunks as the checkpoint in `dir`, whole or not at all (shard/checkpoint_directory.hpp): the
//! pieces go to a staging directory, rank 0 writes the manifest (`layout` in it, one word) and swaps it into place.
//! A failure on any rank stops every rank with its reason; the previous checkpoint in `dir` stays as it was.
//! Collective: every rank calls it with the same arguments.
template <class DataParallel, Communicator Comm>
void save_checkpoint(const std::filesystem::path& dir, const DataParallel& dp, Comm& c,
                     std::string layout = "data-parallel") {
  comm::agreed(c, [&] {
    if (c.rank() == 0) begin_checkpoint(dir);
  });
  comm::agreed(c, [&] { write_checkpoint_piece(checkpoint_staging(dir), dp, c); });
  comm::agreed(c, [&] {
    if (c.rank() == 0)
      commit_checkpoint(dir, {static_cast<std::uint32_t>(c.size()),
                              static_cast<std::uint64_t>(dp.steps_taken()),
                              static_cast<std::uint64_t>(dp.steps_taken()),
                              std::move(layout),
                              {}});
  });
}

namespace detail {

// Reads and checks one old rank's file whole: header against the model, size, checksum.
struct checkpoint_file_data {
  checkpoint_header header;
  std::vector<char> bytes;
};

//! A checkpoint file's bytes, checked as hostile (header, sizes, checksum) against the rank it should be;
//! `name` names it in a refusal (tests/fuzz/fuzz_reader_checkpoint.cpp feeds it any bytes).
inline checkpoint_file_data parse_checkpoint(std::vector<char> bytes, const std::string& name,
                                             std::uint32_t expect_ranks, std::uint32_t expect_rank) {
  checkpoint_file_data d;
  d.bytes = std::move(bytes);
  const auto& b = d.bytes;
  std::size_t at = 0;
  const auto need = [&](std::size_t n, const char* field) {
    if (b.size() - at < n || at > b.size())
      throw invalid_input(std::string("checkpoint.") + field, name + " ends early; the file is truncated");
  };
  const auto get32 = [&](const char* field) {
    need(4, field);
    std::uint32_t v;
    std::memcpy(&v, b.data() + at, 4);
    at += 4;
    return v;
  };
  const auto get64 = [&](const char* field) {
    need(8, field);
    std::uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    at += 8;
    return v;
  };
  need(8, "magic");
  if (std::memcmp(b.data(), checkpoint_magic, 8) != 0)
    throw invalid_input("checkpoint.magic", name + " is not a trinity checkpoint");
  at = 8;
  if (const auto v = get32("version"); v != checkpoint_version)
    throw invalid_input("checkpoint.version", name + " has version " + std::to_string(v) + "; this build reads " +
                                                  std::to_string(checkpoint_version));
  d.header.ranks = get32("ranks");
  d.header.rank = get32("rank");
  if (d.header.ranks != expect_ranks || d.header.rank != expect_rank)
    throw invalid_input("checkpoint.rank", name + " says rank " + std::to_string(d.header.rank) + " of " +
                                               std::to_string(d.header.ranks) + "; its name says " +
                                               std::to_string(expect_rank) + " of " + std::to_string(expect_ranks));
  d.header.steps = get64("steps");
  d.header.states_per = get32("states_per_parameter");
  if (d.header.states_per > 16)
    throw invalid_input("checkpoint.states_per_parameter", name + " names an impossible optimizer");
  const std::uint32_t layers = get32("layers");
  if (layers > (b.size() - at) / 8)
    throw invalid_input("checkpoint.layers", name + " claims more layers than it holds");
  for (std::uint32_t l = 0; l < layers; ++l) d.header.layer_sizes.push_back(get64("layer_sizes"));
  // Payload: per layer, chunk floats times (1 + states_per); then the checksum. Bounded by the bytes at every
  // layer, so no sum of hostile sizes can wrap around.
  std::uint64_t floats = 0;
  for (std::uint32_t l = 0; l < layers; ++l) {
    const std::uint64_t size = d.header.layer_sizes[l];
    if (size > (std::uint64_t{1} << 40))
      throw invalid_input("checkpoint.layer_sizes", name + " names an impossible layer");
    const comm::partition part(static_cast<std::size_t>(size),
                               static_cast<int>(std::max<std::uint32_t>(1, d.header.ranks)));
    floats += part.size(static_cast<int>(d.header.rank)) * (1ull + d.header.states_per);
    if (floats > b.size())
      throw invalid_input("checkpoint.size",
                          name + " is smaller than the layers its header names: it is truncated or corrupt");
  }
  if (b.size() != at + floats * sizeof(float) + 8)
    throw invalid_input("checkpoint.size",
                        name + " holds " + std::to_string(b.size()) + " bytes where its header implies " +
                            std::to_string(at + floats * sizeof(float) + 8) + ": it is truncated or corrupt");
  fnv1a sum;
  sum.add(b.data(), b.size() - 8);
  std::uint64_t stored;
  std::memcpy(&stored, b.data() + b.size() - 8, 8);
  if (stored != sum.h) throw invalid_input("checkpoint.checksum", name + " fails its checksum: the file is corrupt");
  d.bytes.erase(d.bytes.begin(), d.bytes.begin() + static_cast<std::ptrdiff_t>(at));  // keep the payload only
  return d;
}

inline checkpoint_file_data read_checkpoint_file(const std::filesystem::path& file, std::uint32_t expect_ranks,
                                                 std::uint32_t expect_rank) {
  const std::string name = file.string();
  if (const auto problem = trinity::detail::input_file_problem(name))
    throw invalid_input("checkpoint", name + " " + *problem + ": a checkpoint of " + std::to_string(expect_ranks) +
                                          " ranks needs one file per rank");
  const std::string text = trinity::detail::read_input_file(name, trinity::detail::max_data_bytes);
  return parse_checkpoint(std::vector<char>(text.begin(), text.end()), name, expect_ranks, expect_rank);
}

}  // namespace detail

//! How many ranks wrote the checkpoint in dir (from its file names).
inline int checkpoint_ranks(const std::filesystem::path& dir) {
  if (!std::filesystem::is_directory(dir))
    throw invalid_input("checkpoint", dir.string() + " is not a directory holding a checkpoint");
  int ranks = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("rank-0-of-", 0) == 0 && n.size() > 15 && n.substr(n.size() - 5) == ".ckpt")
      ranks = std::stoi(n.substr(10, n.size() - 15));
  }
  if (ranks <= 0) throw invalid_input("checkpoint", dir.string() + " holds no rank-0-of-<n>.ckpt file");
  return ranks;
}

//! A checkpoint written by any number of ranks, read and checked whole (every file's header, size and checksum,
//! so every rank refuses a damaged checkpoint alike), from which any partition's chunk of a layer is cut: what
//! load_checkpoint restores a data_parallel from, and what a caller whose layers moved between data_parallels
//! (a mixture's experts over another expert-parallel size) restores each layer from.
class checkpoint_reader {
 public:
  explicit checkpoint_reader(const std::filesystem::path& dir) : ranks_(checkpoint_ranks(dir)) {
    for (int q = 0; q < ranks_; ++q)
      files_.push_back(detail::read_checkpoint_file(detail::checkpoint_file(dir, q, ranks_),
                                                    static_cast<std::uint32_t>(ranks_), static_cast<std::uint32_t>(q)));
    const auto& h0 = files_[0].header;
    for (const auto& f : files_)
      if (f.header.layer_sizes != h0.layer_sizes || f.header.steps != h0.steps || f.header.states_per != h0.states_per)
        throw invalid_input("checkpoint", "the files of " + dir.string() + " come from different runs");
    // Where layer l's chunk of old rank q starts in q's payload, in floats.
    offset_.resize(static_cast<std::size_t>(ranks_));
    for (int q = 0; q < ranks_; ++q) {
      std::size_t at = 0;
      for (const auto size : h0.layer_sizes) {
        offset_[static_cast<std::size_t>(q)].push_back(at);
        at += comm::partition(static_cast<std::size_t>(size), ranks_).size(q) * (1 + states_per());
      }
    }
  }
  [[nodiscard]] int ranks() const noexcept { return ranks_; }
  [[nodiscard]] long steps() const noexcept { return static_cast<long>(files_[0].header.steps); }
  [[nodiscard]] std::size_t states_per() const noexcept { return files_[0].header.states_per; }
  [[nodiscard]] std::size_t layers() const noexcept { return files_[0].header.layer_sizes.size(); }
  [[nodiscard]] std::size_t layer_size(std::size_t l) const { return files_[0].header.layer_sizes.at(l); }

  //! Layer l's values whole.
  [[nodiscard]] layer_values values(std::size_t l) const {
    layer_values v{std::vector<float>(layer_size(l)), std::vector<float>(layer_size(l) * states_per()), states_per(),
                   steps()};
    chunk(l, comm::partition(layer_size(l), 1), 0, v.parameters, v.states);
    return v;
  }

  //! Layer l's parameters and state planes in `rank`'s chunk of `part` (a partition of the layer's values):
  //! `params` its size, `states` states_per() planes of it, cut from every old file it overlaps.
  void chunk(std::size_t l, const comm::partition& part, int rank, std::span<float> params,
             std::span<float> states) const {
    const std::size_t sp = states_per();
    const comm::partition old_part(layer_size(l), ranks_);
    const std::size_t lo = part.begin(rank), hi = part.end(rank), n = hi - lo;
    trinity::detail::require(part.count == layer_size(l) && params.size() == n && states.size() == n * sp, "chunk",
                             "layer " + std::to_string(l) + " holds " + std::to_string(layer_size(l)) +
                                 " values in the checkpoint; the chunk asked for does not cut them");
    for (int q = 0; q < ranks_; ++q) {
      const std::size_t qlo = old_part.begin(q), qhi = old_part.end(q), qn = qhi - qlo;
      const std::size_t a = std::max(lo, qlo), z = std::min(hi, qhi);
      if (a >= z) continue;
      const char* base =
          files_[static_cast<std::size_t>(q)].bytes.data() + offset_[static_cast<std::size_t>(q)][l] * sizeof(float);
      std::memcpy(params.data() + (a - lo), base + (a - qlo) * sizeof(float), (z - a) * sizeof(float));
      for (std::size_t k = 0; k < sp; ++k)
        std::memcpy(states.data() + k * n + (a - lo), base + (qn + k * qn + (a - qlo)) * sizeof(float),
                    (z - a) * sizeof(float));
    }
  }

 private:
  int ranks_;
  std::vector<detail::checkpoint_file_data> files_;
  std::vector<std::vector<std::size_t>> offset_;
};

namespace detail {
// What load_layers takes from a source's answer, a reader and the layer's index in it or the layer's values
// whole: where the layer is (for a refusal), its size, its steps, and this rank's chunk of it.
struct layer_found {
  std::size_t at, size;
  long steps;
};
using reader_layer = std::pair<const checkpoint_reader*, std::size_t>;
inline layer_found found(const reader_layer& from, std::size_t) {
  return {from.second, from.first->layer_size(from.second), from.first->steps()};
}
inline layer_found found(const layer_values& from, std::size_t l) { return {l, from.parameters.size(), from.steps}; }
inline layer_values chunk_of(const reader_layer& from, const comm::partition& part, int rank) {
  const std::size_t n = part.size(rank);
  layer_values v{std::vector<float>(n), std::vector<float>(n * from.first->states_per()), from.first->states_per(),
                 from.first->steps()};
  from.first->chunk(from.second, part, rank, v.parameters, v.states);
  return v;
}
inline layer_values chunk_of(const layer_values& from, const comm::partition& part, int rank) {
  std::vector<std::size_t> range(part.size(rank));
  std::iota(range.begin(), range.end(), part.begin(rank));
  return cut(from, range);
}
}  // namespace detail

//! Restores every layer of a data_parallel from wherever a checkpoint holds it, for a model whose layers were
//! saved by other data_parallels than this run's (a pipeline's stages at another layout, a mixture's experts at
//! another expert-parallel size): `source(l)` gives the reader holding this run's layer l and that layer's index
//! in it, as a std::pair<const checkpoint_reader*, std::size_t>, or the layer's values whole (layer_values, where
//! the caller re-cut them: a tensor-parallel slice at another size). `rank` is this rank in dp's group. Every
//! layer must have taken the same steps. Returns them.
template <class DataParallel, class Source>
long load_layers(DataParallel& dp, int rank, Source&& source) {
  long steps = -1;
  for (std::size_t l = 0; l < dp.layers(); ++l) {
    const auto from = source(l);
    const auto layer = detail::found(from, l);
    const auto& part = dp.partition(l);
    if (layer.size != part.count)
      throw invalid_input("checkpoint.layer_sizes[" + std::to_string(layer.at) + "]",
                          std::to_string(layer.size) + " values in the checkpoint, " + std::to_string(part.count) +
                              " in the model's layer " + std::to_string(l) +
                              ": the checkpoint is of another model. Fix: the model's shape as saved");
    if (steps >= 0 && layer.steps != steps)
      throw invalid_input("checkpoint", "the model's layers were saved by runs that had taken " +
                                            std::to_string(steps) + " and " + std::to_string(layer.steps) +
                                            " steps: the files come from different runs");
    steps = layer.steps;
    const auto mine = detail::chunk_of(from, part, rank);
    dp.load_chunk(l, mine.parameters, mine.states);
  }
  if (steps < 0) steps = 0;
  dp.set_steps_taken(steps);
  return steps;
}

//! Loads the piece in `dir` (the rank files write_checkpoint_piece wrote, on any number of ranks) into dp, `rank`
//! its rank in dp's group, trusting no manifest: for a caller whose checkpoint holds several pieces and was
//! verified whole at its top (verify_checkpoint). Returns the steps taken.
template <class DataParallel>
long load_checkpoint_piece(const std::filesystem::path& dir, DataParallel& dp, int rank) {
  const checkpoint_reader in(dir);
  if (in.layers() != dp.layers())
    throw invalid_input("checkpoint.layers", "the checkpoint has " + std::to_string(in.layers()) +
                                                 " layers, the model " + std::to_string(dp.layers()));
  return load_layers(dp, rank, [&](std::size_t l) { return std::pair{&in, l}; });
}

//! Loads a checkpoint save_checkpoint wrote, on any number of ranks, into this run's data_parallel, after
//! verify_checkpoint has checked its pieces against its manifest (rank 0 checks; a refusal stops every rank) and
//! the pieces' steps against the manifest's. Returns the steps taken. Collective.
template <class DataParallel, Communicator Comm>
long load_checkpoint(const std::filesystem::path& dir, DataParallel& dp, Comm& c) {
  const auto manifest =
      comm::agreed(c, [&] { return c.rank() == 0 ? verify_checkpoint(dir) : read_checkpoint_manifest(dir); });
  const long steps = comm::agreed(c, [&] { return load_checkpoint_piece(dir, dp, c.rank()); });
  if (static_cast<std::uint64_t>(steps) != manifest.step)
    throw invalid_input("checkpoint", "the pieces of " + dir.string() + " took " + std::to_string(steps) +
                                          " steps; its manifest says " + std::to_string(manifest.step) +
                                          ": they come from different runs. Fix: load another checkpoint");
  return steps;
}

}  // namespace trinity::shard
