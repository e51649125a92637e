// The all-to-all check run on every backend: threads and the simulated fabric here, MPI under mpirun (where it is
// also held against MPI_Alltoallv). Every element names its sender, its receiver and its place, so a block that
// lands in the wrong place, from the wrong rank or cut short is caught; each rank's bytes sent are counted.
#pragma once

#include <trinity/comm/all_to_all.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace a2a_check {

// Element i of the block rank `from` sends to rank `to`.
inline std::uint32_t value(int from, int to, std::size_t i) {
  return static_cast<std::uint32_t>(from) * 1'000'003u + static_cast<std::uint32_t>(to) * 1'009u +
         static_cast<std::uint32_t>(i);
}

// Elements rank `from` sends to rank `to`: uneven, zero for some pairs (pattern 0: none at all for a rank).
inline std::size_t count(int pattern, int from, int to) {
  if (pattern == 0) return static_cast<std::size_t>((from * 3 + to * 5) % 4);
  if (pattern == 1) return static_cast<std::size_t>(from == 0 ? 0 : 1 + (from + 2 * to) % 7);
  return 1000 + static_cast<std::size_t>(from * 17 + to);
}

template <class C>
std::vector<std::string> run(C& c) {
  std::vector<std::string> bad;
  const int n = c.size(), r = c.rank();
  const auto un = static_cast<std::size_t>(n);
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<std::size_t> sc(un), so(un), rc(un), ro(un);
    std::size_t in_size = 0, out_size = 0, sent_to_others = 0;
    for (int j = 0; j < n; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      // Blocks in reverse order of rank, a gap of one element after each: offsets are honoured, not assumed.
      sc[uj] = count(pattern, r, j);
      rc[uj] = count(pattern, j, r);
      if (j != r) sent_to_others += sc[uj];
    }
    for (int j = n - 1; j >= 0; --j) {
      const auto uj = static_cast<std::size_t>(j);
      so[uj] = in_size, in_size += sc[uj] + 1;
      ro[uj] = out_size, out_size += rc[uj] + 1;
    }
    std::vector<std::uint32_t> in(in_size, 0xdeadbeef), out(out_size, 0xfeedface);
    for (int j = 0; j < n; ++j)
      for (std::size_t i = 0; i < sc[static_cast<std::size_t>(j)]; ++i)
        in[so[static_cast<std::size_t>(j)] + i] = value(r, j, i);
    const auto before = c.bytes_sent();
    trinity::comm::all_to_allv(c, std::span<const std::uint32_t>(in), std::span<const std::size_t>(sc),
                               std::span<const std::size_t>(so), std::span<std::uint32_t>(out),
                               std::span<const std::size_t>(rc), std::span<const std::size_t>(ro));
    if (c.bytes_sent() - before != sent_to_others * sizeof(std::uint32_t))
      bad.push_back("pattern " + std::to_string(pattern) + ": sent " + std::to_string(c.bytes_sent() - before) +
                    " bytes, not " + std::to_string(sent_to_others * sizeof(std::uint32_t)));
    for (int j = 0; j < n; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      for (std::size_t i = 0; i < rc[uj]; ++i)
        if (out[ro[uj] + i] != value(j, r, i)) {
          bad.push_back("pattern " + std::to_string(pattern) + ": element " + std::to_string(i) + " from rank " +
                        std::to_string(j) + " is wrong");
          break;
        }
      if (out[ro[uj] + rc[uj]] != 0xfeedface)
        bad.push_back("pattern " + std::to_string(pattern) + ": the gap after rank " + std::to_string(j) +
                      "'s block was written");
    }
  }
  // Equal blocks: block j of `in` to rank j, rank j's block for this rank into block j of `out`.
  const std::size_t block = 5;
  std::vector<float> in(un * block), out(un * block, -1.0f);
  for (int j = 0; j < n; ++j)
    for (std::size_t i = 0; i < block; ++i)
      in[static_cast<std::size_t>(j) * block + i] = static_cast<float>(value(r, j, i) % 65536);
  trinity::comm::all_to_all(c, std::span<const float>(in), std::span<float>(out));
  for (int j = 0; j < n; ++j)
    for (std::size_t i = 0; i < block; ++i)
      if (out[static_cast<std::size_t>(j) * block + i] != static_cast<float>(value(j, r, i) % 65536)) {
        bad.push_back("all_to_all: element " + std::to_string(i) + " from rank " + std::to_string(j) + " is wrong");
        break;
      }
  return bad;
}

}  // namespace a2a_check
