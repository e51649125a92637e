#pragma once
//! \file
//! What a mixture-of-experts block (the MLP of an MoE layer) costs one GPU per micro-batch, as Megatron-Core
//! runs it with its all-to-all token dispatcher and grouped GEMMs:
//!  - T_g tokens enter on each GPU: the micro-batch's b·s/cp, split t ways by sequence parallelism (which an
//!    MoE layer with tp > 1 needs);
//!  - the router, a T_g × E GEMM over h, picks each token's top_k experts;
//!  - dispatch: each token's k rows go to the ranks of their experts, an all-to-all over the ep ranks of the
//!    expert group ((ep − 1)/ep of them leave the GPU), then with etp > 1 an all-gather over the etp ranks that
//!    split each expert; combine reverses both (a reduce-scatter, then the all-to-all). Backward sends the
//!    gradients the same ways: four all-to-alls a layer;
//!  - the experts: a GPU holds E/ep of them, each 1/etp of its width, and runs etp·T_g·k·ρ rows (ρ: the
//!    busiest rank's load over the mean, training_job::expert_load) split over its experts, each expert's GEMMs
//!    at the efficiency of its own small shape (grouped GEMMs are one launch of many small GEMMs);
//!  - shared experts run on every token as a dense MLP split t ways (with their own tensor-parallel
//!    collectives, counted by the caller);
//!  - activations kept: the router's input and fp32 probabilities per token, and per dispatched row the
//!    expert's input, its activation's inputs and its second GEMM's input;
//!  - the rows' copies, memory-bound: the dispatcher gathers each token's k rows into destination order
//!    (permute) and scatters them back weighted (unpermute); where a rank holds several experts, the rows it
//!    receives are regrouped by expert and back (Megatron-Core's sort_chunks_by_idxs). Each copy reads and
//!    writes a row of `hidden` 16-bit values, and the backward pass runs the same copies on the gradients.
//! The all-to-all's group spans etp·ep consecutive ranks (Megatron-Core's order puts the expert group inside
//! a pipeline stage's tp·cp·dp ranks): inside the scale-up domain where that fits; where it does not, the
//! blocks for the members that share a GPU's domain go over the fast link while the rest cross the slow one at
//! the same time (expert_all_to_all_time). Its time is the busiest rank's: ρ times the balanced bytes. Bytes
//! sent are counted with balanced routing.

#include <algorithm>
#include <cstddef>

#include <trinity/model/collectives.hpp>
#include <trinity/model/parallel_layout.hpp>
#include <trinity/model/training_cluster.hpp>
#include <trinity/model/training_job.hpp>

namespace trinity::model {

//! One MoE block's share of a micro-batch on one GPU.
struct moe_block_cost {
  seconds gemm_f{}, gemm_b{};  //!< router, routed experts and shared experts
  seconds all_to_all{};        //!< one dispatch or combine, the busiest rank's
  bytes all_to_all_bytes{};    //!< what one of them sends per GPU
  bytes all_to_all_buffer{};   //!< the busiest rank's rows one of them moves (its time's size)
  seconds etp_collective{};    //!< one all-gather (or reduce-scatter) over the etp ranks; 0 with etp = 1
  bytes etp_bytes{};           //!< what one of them sends per GPU
  bytes etp_gathered{};        //!< the busiest rank's rows one all-gather assembles (its time's size)
  //! With the node-deduplicated dispatcher, the busiest rank's bytes one dispatch sends across nodes and within
  //! its node (their sum is all_to_all_buffer); 0 with the all-to-all.
  bytes across_buffer{}, within_buffer{};
  double tokens = 0;  //!< T_g: tokens entering on this GPU
  double rows = 0;    //!< token-expert rows this GPU's experts run, balanced
  double kept = 0;    //!< activation bytes the block keeps for the backward pass
  bytes copied{};     //!< what the rows' permutations read and write in one pass (the other the same)
  //! The exchanges one pass runs: dispatch and combine, each with its etp collective.
  [[nodiscard]] seconds exchange() const { return 2.0 * (all_to_all + etp_collective); }
};

//! Rows a GPU's tokens send to other expert-parallel ranks in one all-to-all with balanced routing:
//! T_g·k·(ep − 1)/ep, each `hidden` values of `value_bytes` (16-bit on a GPU; trinity-train's are fp32).
inline bytes expert_all_to_all_bytes(const transformer_shape& m, double tokens, std::size_t ep,
                                     double value_bytes = 2.0) {
  const double e = static_cast<double>(ep);
  return bytes{tokens * static_cast<double>(m.top_k) * (e - 1.0) / e * static_cast<double>(m.hidden) * value_bytes};
}

//! Rows one GPU sends in one dispatch with the node-deduplicated dispatcher (token_dispatcher::by_node,
//! parallel/node_dispatch.hpp), per token entering it, with balanced routing: each token's k experts a uniform
//! k-subset of the E, spread over `ep` ranks in nodes of `node_ranks` (N = ep/node_ranks nodes of g ranks, L = E/ep
//! experts a rank). A given set of x experts misses all of a token's k with probability C(E − x, k)/C(E, k), so a
//! token reaches another node with p_n = 1 − C(E − gL, k)/C(E, k) and a given rank with p_g = 1 − C(E − L, k)/C(E, k).
//!  - across: it crosses to each other node it reaches, once: (N − 1)·p_n;
//!  - within: the rank forwards each token it stages (its own, and those that came across, T·(N − 1)·p_n of them,
//!    each reaching (g − 1)·p_g/p_n other ranks of the node) to each other rank of the node it reaches, once:
//!    (g − 1)·p_g + (N − 1)·p_n·(g − 1)·p_g/p_n = N·(g − 1)·p_g.
//! With k = 1 `across` is the all-to-all's cross-node rows, (ep − g)/ep; where k is larger it is fewer, since a
//! token with two experts on a node crosses once.
struct dispatch_rows {
  double across = 0, within = 0;
};
inline dispatch_rows deduplicated_dispatch_rows(std::size_t experts, std::size_t top_k, std::size_t ep,
                                                std::size_t node_ranks) {
  const double E = static_cast<double>(experts), k = static_cast<double>(top_k);
  const auto miss = [&](double x) {  // C(E − x, k)/C(E, k)
    double p = 1;
    for (double i = 0; i < k; ++i) p *= std::max(E - x - i, 0.0) / (E - i);
    return p;
  };
  const double g = static_cast<double>(node_ranks), nodes = static_cast<double>(ep / node_ranks),
               local = E / static_cast<double>(ep);
  return {(nodes - 1.0) * (1.0 - miss(g * local)), nodes * (g - 1.0) * (1.0 - miss(local))};
}

//! The ranks of a node an expert group of the node-deduplicated dispatcher spans: its ep consecutive ranks (etp = 1)
//! fill whole scale-up domains, or sit inside one.
inline std::size_t dispatch_node_ranks(const training_cluster& c, const parallel_layout& l) {
  return std::min(l.ep, c.domain);
}

//! One node-deduplicated dispatch (or combine) for the busiest rank: `across` bytes to the other nodes over the slow
//! link while it forwards `within` bytes to the other ranks of its node over the fast one (DeepEP pipelines the two
//! hops): the slower of the two, each a latency per peer.
inline seconds deduplicated_dispatch_time(const training_cluster& c, const parallel_layout& l, bytes across,
                                          bytes within) {
  const std::size_t g = dispatch_node_ranks(c, l), nodes = l.ep / g;
  const seconds far = static_cast<double>(nodes - 1) * c.slow.latency + across / c.slow.bandwidth;
  const seconds near = static_cast<double>(g - 1) * c.fast.latency + within / c.fast.bandwidth;
  return std::max(far, near);
}

//! Rows a GPU sends over its expert-tensor-parallel group in one all-gather (or reduce-scatter) with balanced
//! routing: its T_g·k rows to each of the etp − 1 others, `hidden` values of `value_bytes` each.
inline bytes expert_tensor_gather_bytes(const transformer_shape& m, double tokens, std::size_t etp,
                                        double value_bytes = 2.0) {
  return bytes{(static_cast<double>(etp) - 1.0) * tokens * static_cast<double>(m.top_k) *
               static_cast<double>(m.hidden) * value_bytes};
}

//! What one GPU sends over its expert groups in one pass of one MoE layer (the forward, or the backward with
//! the gradients going the same ways back) with balanced routing: the dispatch and the combine, each an
//! all-to-all over the ep ranks (expert_all_to_all_bytes) and a collective over the etp ranks
//! (expert_tensor_gather_bytes). The step model, trinity-train's count and `trinity verify` all read it here.
inline bytes expert_exchange_bytes(const transformer_shape& m, double tokens, std::size_t ep, std::size_t etp,
                                   double value_bytes = 2.0) {
  return 2.0 * (expert_all_to_all_bytes(m, tokens, ep, value_bytes) +
                expert_tensor_gather_bytes(m, tokens, etp, value_bytes));
}

//! Passes a step runs one MoE layer's exchange (expert_exchange_bytes) for each micro-batch: the forward and the
//! backward, and the forward again where the layer is recomputed (in full, or its `moe` module), since Megatron-Core's
//! checkpoint reruns the token dispatcher with the experts.
constexpr double expert_exchange_passes(bool recomputed) noexcept { return recomputed ? 3.0 : 2.0; }

//! All-reduces over the tensor group one pass of an MoE layer's shared experts adds (with sequence parallelism an
//! all-gather and a reduce-scatter of the same bytes): one, their row-parallel GEMM's partial sums, where the model
//! has shared experts; they run as one dense MLP split tp ways (Megatron-Core's SharedExpertMLP).
constexpr double shared_expert_all_reduces(const transformer_shape& m) noexcept {
  return m.shared_experts > 0 ? 1.0 : 0.0;
}

//! One all-to-all of `size` bytes per rank (size/ep to each member) over the ep ranks of an expert group whose
//! members sit etp ranks apart. Within one scale-up domain, the pairwise exchange on its link. Across domains,
//! a rank's i = domain/etp − 1 domain-mates take i/ep of its buffer over the fast link while the o = ep − 1 − i
//! others take o/ep over the slow one, concurrently: the slower of the two.
inline seconds expert_all_to_all_time(const training_cluster& c, const parallel_layout& l, bytes size) {
  if (l.ep <= 1) return seconds{};
  if (span(l, layout_group::expert) <= c.domain)
    return pairwise_all_to_all_time(l.ep, size, detail::as_collective(c.fast));
  const double ep = static_cast<double>(l.ep);
  const double inside = static_cast<double>(std::max<std::size_t>(c.domain / l.etp, 1)) - 1.0,
               outside = ep - 1.0 - inside;
  const seconds near = inside * c.fast.latency + inside / ep * (size / c.fast.bandwidth);
  const seconds far = outside * c.slow.latency + outside / ep * (size / c.slow.bandwidth);
  return std::max(near, far);
}

//! Bytes one pass's row copies read and write on the busiest GPU, for `tokens` entering it and `rows` its
//! experts run: permute reads each of the tokens' k rows and writes it, unpermute reads them back and writes
//! the tokens; with ep > 1 and more than one local expert the received rows are regrouped by expert before the
//! GEMMs and back after them, a read and a write each way. 16-bit rows of `hidden` values.
inline bytes expert_row_copy_bytes(const transformer_shape& m, const parallel_layout& l, double tokens, double rows) {
  const double h = static_cast<double>(m.hidden), sent = tokens * static_cast<double>(m.top_k);
  const bool regroup = l.ep > 1 && m.experts / l.ep > 1;
  return bytes{2.0 * h * (2.0 * sent + (sent + tokens) + (regroup ? 4.0 * rows : 0.0))};
}

//! Activation bytes the block keeps for the backward pass, for `T` tokens per GPU: the router's input (16-bit)
//! and probabilities (fp32) per token; per row at the busiest rank's load the expert's input, its activation's
//! input(s) and its second GEMM's input (fp8 casts where the GEMMs run in fp8); and the shared experts' MLP.
inline double moe_kept_bytes(const training_job& j, const parallel_layout& l, double T) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), etp = static_cast<double>(l.etp);
  const double h = static_cast<double>(m.hidden), E = static_cast<double>(m.experts), k = static_cast<double>(m.top_k);
  const double fe = m.expert_ffn(), up = m.up_width(fe);
  const double tokens = l.sequence_parallel ? T / t : T, rows = etp * tokens * k;
  const double linear_in = j.fp8 ? 1.0 : 2.0;
  double kept =
      tokens * (2.0 * h + 4.0 * E) + j.expert_load() * rows * (linear_in * h + 2.0 * up / etp + linear_in * fe / etp);
  if (m.shared_experts > 0) {
    const double fs = m.shared_ffn(), up_s = m.up_width(fs);
    kept += T * (2.0 * up_s + linear_in * fs) / t;
  }
  return kept;
}

//! The MoE block for `T` tokens per GPU per micro-batch (b·s/cp) under layout `l` (checked by the caller).
inline moe_block_cost moe_block(const training_job& j, const training_cluster& c, const parallel_layout& l, double T) {
  const auto& m = j.shape;
  const double t = static_cast<double>(l.tp), ep = static_cast<double>(l.ep), etp = static_cast<double>(l.etp);
  const double h = static_cast<double>(m.hidden), E = static_cast<double>(m.experts), k = static_cast<double>(m.top_k);
  const double fe = m.expert_ffn(), up = m.up_width(fe);
  const double load = j.expert_load();
  moe_block_cost x;
  x.tokens = l.sequence_parallel ? T / t : T;
  x.rows = etp * x.tokens * k;
  // The router, in 16 bits whatever the layers' GEMMs run in.
  x.gemm_f = detail::gemm_time(c, x.tokens, E, h);
  x.gemm_b = detail::gemm_bwd(c, x.tokens, E, h);
  // The busiest GPU's experts: E/ep of them, each with its share of the rows, at 1/etp of its width.
  const double local = E / ep, per_expert = load * x.rows / local;
  x.gemm_f += local * (detail::gemm_time(c, per_expert, up / etp, h, j.fp8) +
                       detail::gemm_time(c, per_expert, h, fe / etp, j.fp8));
  x.gemm_b += local * (detail::gemm_bwd(c, per_expert, up / etp, h, j.fp8) +
                       detail::gemm_bwd(c, per_expert, h, fe / etp, j.fp8));
  if (m.shared_experts > 0) {
    // Every token through the shared experts, one dense MLP split t ways.
    const double fs = m.shared_ffn(), up_s = m.up_width(fs);
    x.gemm_f += detail::gemm_time(c, T, up_s / t, h, j.fp8) + detail::gemm_time(c, T, h, fs / t, j.fp8);
    x.gemm_b += detail::gemm_bwd(c, T, up_s / t, h, j.fp8) + detail::gemm_bwd(c, T, h, fs / t, j.fp8);
  }
  // The exchange: an all-to-all over the ep ranks, then an all-gather over the etp ranks of each expert.
  if (l.dispatcher == token_dispatcher::by_node && l.ep > 1) {
    // A token once to each other node and once to each rank it reaches (deduplicated_dispatch_rows).
    const auto d = deduplicated_dispatch_rows(m.experts, m.top_k, l.ep, dispatch_node_ranks(c, l));
    x.all_to_all_bytes = bytes{x.tokens * (d.across + d.within) * h * 2.0};
    x.across_buffer = bytes{load * x.tokens * d.across * h * 2.0};
    x.within_buffer = bytes{load * x.tokens * d.within * h * 2.0};
    x.all_to_all_buffer = x.across_buffer + x.within_buffer;
    x.all_to_all = deduplicated_dispatch_time(c, l, x.across_buffer, x.within_buffer);
  } else {
    x.all_to_all_bytes = expert_all_to_all_bytes(m, x.tokens, l.ep);
    x.all_to_all_buffer = bytes{load * x.tokens * k * h * 2.0};
    x.all_to_all = expert_all_to_all_time(c, l, x.all_to_all_buffer);
  }
  if (l.etp > 1) {
    x.etp_gathered = etp * x.all_to_all_buffer;
    x.etp_collective = ring_all_gather_time(l.etp, x.etp_gathered, detail::as_collective(detail::level(c, l.etp)));
    x.etp_bytes = expert_tensor_gather_bytes(m, x.tokens, l.etp);
  }
  x.kept = moe_kept_bytes(j, l, T);
  x.copied = expert_row_copy_bytes(m, l, x.tokens, load * x.rows);
  return x;
}

}  // namespace trinity::model
