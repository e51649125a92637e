#pragma once
//! \file
//! A group: some ranks of a Communicator, renumbered 0..k-1, itself a
//! Communicator, so every collective runs over a tensor-parallel, pipeline or
//! data-parallel group of a larger world unchanged. Messages go to the member's
//! world rank; the group counts only what it sent, so each group's traffic is
//! checked on its own.
//!
//!   comm::group tp(world_comm, {0, 1, 2, 3});        // this rank must be a member
//!   comm::all_reduce(tp, std::span<float>(partial), comm::reduce_op::sum);
//!
//! Two groups that share a pair of ranks must not run at once on the same
//! thread's communicator (a rank runs one collective at a time, as MPI's
//! communicators of one process do).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>

namespace trinity::comm {

template <Communicator C>
class group {
 public:
  using communicator_concept = communicator_tag;
  static constexpr std::string_view name = "group";

  //! `members`: world ranks in the group's order; distinct, in range, and including the caller's.
  group(C& world, std::vector<int> members) : world_(&world), members_(std::move(members)) {
    trinity::detail::require(!members_.empty(), "members", "a group needs at least one rank");
    auto sorted = members_;
    std::sort(sorted.begin(), sorted.end());
    trinity::detail::require(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), "members",
                             "a rank is listed twice");
    trinity::detail::require(sorted.front() >= 0 && sorted.back() < world.size(), "members",
                             "every member must be a rank of the world, 0 to " + std::to_string(world.size() - 1));
    const auto me = std::find(members_.begin(), members_.end(), world.rank());
    trinity::detail::require(me != members_.end(), "members",
                             "rank " + std::to_string(world.rank()) + " is not a member; only members make the group");
    rank_ = static_cast<int>(me - members_.begin());
  }

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return static_cast<int>(members_.size()); }
  [[nodiscard]] std::uint64_t bytes_sent() const noexcept { return sent_; }
  //! The world rank of group rank r.
  [[nodiscard]] int world_rank(int r) const { return members_.at(static_cast<std::size_t>(r)); }

  void send(std::span<const std::byte> out, int dest) {
    world_->send(out, world_rank(dest));
    sent_ += out.size();
  }
  void recv(std::span<std::byte> in, int source) { world_->recv(in, world_rank(source)); }
  void sendrecv(std::span<const std::byte> out, int dest, std::span<std::byte> in, int source) {
    world_->sendrecv(out, world_rank(dest), in, world_rank(source));
    sent_ += out.size();
  }

 private:
  C* world_;
  std::vector<int> members_;
  int rank_ = 0;
  std::uint64_t sent_ = 0;
};

}  // namespace trinity::comm
