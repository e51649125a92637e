#pragma once
//! \file
//! How the reference trainer's mixture-of-experts block sends its tokens' rows to their experts' ranks and back: a
//! dispatcher policy the block holds (train::dispatcher), one of
//!  - all_to_all_dispatch: Megatron-Core's alltoall dispatcher, a row a kept choice (parallel/expert_parallel.hpp),
//!    with expert tensor parallelism (etp > 1) its tensor group's gather and sum beside it;
//!  - node_dispatch: DeepEP's, deduplicated by node (parallel/node_dispatch.hpp): a token crosses to another node
//!    once and reaches a rank once, however many of its experts they hold; `node_ranks` consecutive ranks of the
//!    expert group a node, and etp = 1 (as model::check_layout rules for dispatcher=deepep).
//! Each runs a forward (keeping its pass), the backward of that pass, and counts the bytes a pass sent from what
//! it kept, so the block's count can be checked against the bytes its groups sent.
//!
//!   train::moe_config m{.experts = 8, .ep = 4, .dispatch = train::node_dispatch{.node_ranks = 2}};

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <trinity/concepts/communicator.hpp>
#include <trinity/error.hpp>
#include <trinity/model/moe_layer.hpp>
#include <trinity/parallel/expert_parallel.hpp>
#include <trinity/parallel/node_dispatch.hpp>

namespace trinity::train {

//! Megatron-Core's alltoall dispatcher: every kept choice's row to its expert's rank and back.
struct all_to_all_dispatch {
  using pass = parallel::moe_pass;

  template <Communicator E, Communicator T>
  void forward(E& ep, T& etp, const parallel::moe_shape& s, std::span<const parallel::expert_weights> local,
               std::span<const float> x, const parallel::routing& r, std::span<float> y, pass& p) const {
    if (etp.size() > 1)
      parallel::moe_forward(ep, etp, s, local, x, r, y, p);
    else
      parallel::moe_forward(ep, s, local, x, r, y, p);
  }
  template <Communicator E, Communicator T>
  void backward(E& ep, T& etp, const parallel::moe_shape& s, std::span<const parallel::expert_weights> local,
                const pass& p, std::span<const float> dy, std::span<float> dx,
                std::span<parallel::expert_weights> dlocal, std::span<float> dlogits) const {
    if (etp.size() > 1)
      parallel::moe_backward(ep, etp, s, local, p, dy, dx, dlocal, dlogits);
    else
      parallel::moe_backward(ep, s, local, p, dy, dx, dlocal, dlogits);
  }
  //! What the pass `p` sent over the expert group (rank `me` of `ep`) and the tensor group (rank `t` of `etp`): the
  //! row counts ahead of the dispatch, every row to or from another rank in the forward and, unless `again` (a
  //! recomputed forward, whose backward is the first's), its gradient in the backward; with etp > 1 the tensor
  //! group's counts and gathered and summed rows (parallel::expert_tensor_bytes) each way, its counts once.
  [[nodiscard]] static std::uint64_t bytes_of(const pass& p, const parallel::moe_shape& s, std::size_t me,
                                              std::size_t ep, std::size_t t, std::size_t etp, bool again) {
    const std::uint64_t passes = again ? 1 : 2, h = s.hidden, local = s.experts / ep;
    std::uint64_t rows = 0;
    for (std::size_t j = 0; j < p.send_counts.size(); ++j)
      if (j != me) rows += p.send_counts[j] / h + p.recv_counts[j] / h;
    std::uint64_t bytes = local * (ep - 1) * sizeof(std::size_t) + passes * rows * h * sizeof(float);
    if (etp > 1) {
      // The tensor group: this member's rows, and the others', from every member's counts.
      const std::size_t groups = p.counts_in.size();
      std::size_t mine = 0, all = 0;
      for (std::size_t i = 0; i < p.member_counts_in.size(); ++i)
        (i / groups == t ? mine : all) += p.member_counts_in[i];
      const std::size_t once = parallel::expert_tensor_bytes(mine, all, s.hidden, groups, etp);
      bytes += passes * once - (passes - 1) * (etp - 1) * groups * sizeof(std::size_t);
    }
    return bytes;
  }
  //! The step model's count of what bytes_of counts, for one pass of `rows` tokens a rank under balanced routing, in
  //! fp32 values: a forward and a backward pass's exchange (model::expert_exchange_bytes), and the counts ahead of
  //! the dispatch and of the forward's gather; with `recomputed`, the forward's again (layer_cost::exchanges, 3
  //! against 2), counts too.
  [[nodiscard]] static double modelled_bytes(const parallel::moe_shape& s, std::size_t ep, std::size_t etp,
                                             std::size_t rows, bool recomputed) {
    model::transformer_shape m;
    m.hidden = s.hidden;
    m.top_k = s.top_k;
    const std::size_t local = s.experts / ep, counts = local * (ep - 1) + (etp - 1) * ep * local;
    const double passes = model::expert_exchange_passes(recomputed), forwards = recomputed ? 2 : 1;
    return passes * model::expert_exchange_bytes(m, static_cast<double>(rows), ep, etp, 4.0).value() +
           forwards * static_cast<double>(counts * sizeof(std::size_t));
  }
};

//! DeepEP's dispatcher: a token once to each other node holding one of its experts, then once to each rank of
//! the node holding one, the sums back the same ways.
struct node_dispatch {
  using pass = parallel::node_pass;
  std::size_t node_ranks = 1;  //!< consecutive ranks of the expert group a node (a divisor of ep)

  template <Communicator E, Communicator T>
  void forward(E& ep, T& etp, const parallel::moe_shape& s, std::span<const parallel::expert_weights> local,
               std::span<const float> x, const parallel::routing& r, std::span<float> y, pass& p) const {
    require_one_slice(etp);
    parallel::moe_forward_by_node(ep, node_ranks, s, local, x, r, y, p);
  }
  template <Communicator E, Communicator T>
  void backward(E& ep, T& etp, const parallel::moe_shape& s, std::span<const parallel::expert_weights> local,
                const pass& p, std::span<const float> dy, std::span<float> dx,
                std::span<parallel::expert_weights> dlocal, std::span<float> dlogits) const {
    require_one_slice(etp);
    parallel::moe_backward_by_node(ep, s, local, p, dy, dx, dlocal, dlogits);
  }
  //! What the pass `p` sent (rank `me` of the expert group): parallel::node_dispatch_bytes of its records to and
  //! from other ranks over both hops, forward and, unless `again`, backward.
  [[nodiscard]] static std::uint64_t bytes_of(const pass& p, const parallel::moe_shape& s, std::size_t me,
                                              std::size_t /*ep*/, std::size_t /*t*/, std::size_t /*etp*/, bool again) {
    const std::size_t node = me / p.node_ranks, local = me % p.node_ranks;
    const std::size_t sent = off_rank(p.across.send_counts, node) + off_rank(p.within.send_counts, local);
    const std::size_t received = off_rank(p.across.recv_counts, node) + off_rank(p.within.recv_counts, local);
    const auto once = [&](bool backward) {
      return parallel::node_dispatch_bytes(backward, sent, received, s.hidden, s.top_k, p.nodes, p.node_ranks);
    };
    return once(false) + (again ? 0 : once(true));
  }

 private:
  template <Communicator T>
  static void require_one_slice(T& etp) {
    trinity::detail::require(etp.size() == 1, "etp",
                             std::to_string(etp.size()) +
                                 " expert-tensor ranks; the node-deduplicated dispatcher "
                                 "sends whole rows: give etp=1, or the all-to-all dispatcher");
  }
  static std::size_t off_rank(const std::vector<std::size_t>& counts, std::size_t self) {
    std::size_t n = 0;
    for (std::size_t j = 0; j < counts.size(); ++j) n += j == self ? 0 : counts[j];
    return n;
  }
};

//! The block's dispatcher, chosen at run time (a policy object, so the block is compiled once for both).
using dispatcher = std::variant<all_to_all_dispatch, node_dispatch>;
//! What a forward's dispatcher kept for its backward.
using dispatch_pass = std::variant<parallel::moe_pass, parallel::node_pass>;

//! Whether the step model counts what the dispatcher sends (all_to_all_dispatch::modelled_bytes): the all-to-all's
//! rows are its routing's, whatever the experts; the node-deduplicated dispatcher's depend on which experts share a
//! node, which the model counts for experts drawn at random (model::deduplicated_dispatch_rows) and the trainer's
//! balanced routing does not draw.
inline bool model_counts(const dispatcher& d) noexcept { return std::holds_alternative<all_to_all_dispatch>(d); }

//! The routing a pass ran (both dispatchers keep it): the assignments kept and dropped.
inline const parallel::routing& routing_of(const dispatch_pass& p) {
  return std::visit([](const auto& q) -> const parallel::routing& { return q.r; }, p);
}

}  // namespace trinity::train
