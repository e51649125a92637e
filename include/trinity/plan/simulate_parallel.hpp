#pragma once
//! \file
//! A parallel layout's traffic on the simulated fabric (fabric/), beside the
//! step model's α-β figures (model/parallel_training.hpp): one of each kind of
//! transfer a step repeats, with every group of that kind running at once, so
//! groups that share a link show it.
//!  - tensor parallelism: one all-reduce of a layer's activation over each
//!    tensor group (with sequence parallelism the reduce-scatter and
//!    all-gather that replace it move the same bytes);
//!  - context parallelism: one hop of the K/V ring in every ring;
//!  - pipeline parallelism: one activation handed from every stage to the
//!    next, in every pipeline at once (the steady state of 1F1B);
//!  - a mixture of experts: one dispatch all-to-all in every expert group at
//!    once (the busiest rank's rows), and with etp > 1 the rows' all-gather
//!    over every expert-tensor group;
//!  - data parallelism: a step's gradient all-reduce, or ZeRO's
//!    reduce-scatter and parameter all-gather (under ZeRO-3 one per
//!    micro-batch pass), over every group of ranks that share weights (data
//!    and context); through the layout's gradient codec its frames go round
//!    instead (all-gathered whole where they cannot be summed on the way); a
//!    mixture's routed experts over their own expert-data-parallel groups.
//! The predicted figure is what the step model charges for the same transfer.
//!
//! The fabric is the system's own link hierarchy (hierarchy_fabric): each
//! scale-up domain a switch its GPUs reach over the interconnect, and with a
//! scale-out link a second switch every GPU reaches over its own port of it,
//! one NIC per GPU as DGX nodes are built. A path pays each link family's
//! latency once (fabric/topology.hpp), so a message inside a domain costs the
//! interconnect's latency, one between domains the scale-out link's; what the
//! simulation adds is the ring's step-by-step synchronisation, the sharing of
//! links among concurrent groups, and flits.
//!
//!   const auto s = plan::presets::dgx_h100();
//!   const auto f = plan::hierarchy_fabric(s, layout.gpus());   // refers to s: keep s alive
//!   for (const auto& x : plan::simulate(s, workload, layout, f)) x.ratio();

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/fabric/collectives.hpp>
#include <trinity/fabric/simulator.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/units/format.hpp>

namespace trinity::plan {

//! The system's link hierarchy for `gpus` GPUs as a fabric (see the file comment); rank r on GPU r. The
//! topology's links name the system's strings: the binding must not outlive `s`.
inline fabric_binding hierarchy_fabric(const system& s, std::size_t gpus) {
  trinity::detail::require(gpus >= 1, "gpus", "must be at least 1");
  const std::size_t domain = s.scale_out ? (s.scale_up_domain ? s.scale_up_domain : s.device.count) : gpus;
  trinity::detail::require(s.scale_out || gpus <= s.device.count, "gpus",
                           std::to_string(gpus) + " GPUs, and " + s.name + " has " + std::to_string(s.device.count) +
                               " in one domain with no scale-out link");
  // The link as it stands in the hierarchy (scale-up or scale-out), whatever its own family: the simulated
  // fabric routes by these roles.
  const auto as_link = [](const priced_link& l, link_family f) {
    return link_descriptor{l.name, f, l.collective_rate(), l.latency, bytes{1}, 0, false, l.energy, l.source};
  };
  fabric::topology t;
  std::vector<std::uint32_t> gpu;
  const std::uint32_t out = s.scale_out ? t.add_switch("scale-out", link_family::infiniband) : 0;
  std::uint32_t up = 0;
  for (std::size_t g = 0; g < gpus; ++g) {
    if (g % domain == 0) up = t.add_switch("scale-up" + std::to_string(g / domain), link_family::nvlink);
    gpu.push_back(t.add_accelerator("gpu" + std::to_string(g)));
    // The scale-up link first: route() breaks ties towards the lower edge, so a domain's GPUs talk over it.
    t.connect(gpu.back(), up, as_link(s.interconnect, link_family::nvlink));
    if (s.scale_out) t.connect(gpu.back(), out, as_link(*s.scale_out, link_family::infiniband));
  }
  return fabric_binding{s.name + " links", std::move(t), std::move(gpu), std::nullopt, {}};
}

namespace detail {
//! Every group of each kind once (parallel::groups_of's, from its first member), as the fabric places it.
struct placed_groups {
  std::vector<std::vector<std::uint32_t>> tp, cp, pp, weights, expert, expert_tensor, expert_data;
};
inline placed_groups place_groups(const model::parallel_layout& l, const fabric_binding& f) {
  const std::size_t n = l.gpus();
  placed_groups p;
  for (std::size_t rank = 0; rank < n; ++rank) {
    const auto g = parallel::groups_of(l, static_cast<int>(n), static_cast<int>(rank));
    const auto add = [&](const std::vector<int>& group, std::vector<std::vector<std::uint32_t>>& to) {
      if (static_cast<std::size_t>(group.front()) != rank) return;
      auto& placed = to.emplace_back();
      for (const int member : group) placed.push_back(f.ranks[static_cast<std::size_t>(member)]);
    };
    add(g.tp, p.tp);
    add(g.cp, p.cp);
    add(g.pp, p.pp);
    add(g.weights, p.weights);
    add(g.expert, p.expert);
    add(g.expert_tensor, p.expert_tensor);
    add(g.expert_data, p.expert_data);
  }
  return p;
}

inline std::string count_of(std::size_t k, const char* what) {
  return std::to_string(k) + " " + what + (k == 1 ? "" : "s");
}

//! The last of `flows` to finish, after the simulator ran them all at once.
inline seconds all_at_once(fabric::simulator& sim, const std::vector<std::size_t>& flows) {
  sim.run();
  seconds last{};
  for (const auto fl : flows) last = std::max(last, sim.finish(fl));
  return last;
}

//! A mixture's dispatch all-to-all in every expert group at once, and with etp > 1 the rows' all-gather.
inline void add_expert_pairs(std::vector<simulated_pair>& pairs, const model::training_job& job,
                             const model::training_cluster& c, const model::parallel_layout& l, const fabric_binding& f,
                             const placed_groups& g, double T) {
  // One dispatch: every member of every expert group sends each other member its share of the busiest
  // rank's rows at once, over whichever link joins them.
  const auto e = model::moe_block(job, c, l, T);
  const bytes size = e.all_to_all_buffer, share = size / static_cast<double>(l.ep);
  fabric::simulator sim(f.topology);
  std::vector<std::size_t> flows;
  if (l.dispatcher == model::token_dispatcher::by_node && l.ep > 1) {
    // Deduplicated by node: each member's cross-node bytes to the member with its place in each other node, its
    // forwarded bytes to the other members of its own node, all at once.
    const std::size_t gn = model::dispatch_node_ranks(c, l), nodes = l.ep / gn;
    const bytes across = nodes > 1 ? e.across_buffer / static_cast<double>(nodes - 1) : bytes{},
                within = gn > 1 ? e.within_buffer / static_cast<double>(gn - 1) : bytes{};
    for (const auto& group : g.expert)
      for (std::size_t a = 0; a < group.size(); ++a)
        for (std::size_t b = 0; b < group.size(); ++b) {
          if (a == b || (a / gn != b / gn && a % gn != b % gn)) continue;
          flows.push_back(sim.transfer(group[a], group[b], a / gn == b / gn ? within : across));
        }
    const seconds last = all_at_once(sim, flows);
    pairs.push_back({"an expert dispatch deduplicated by node (" + to_string(e.across_buffer) + " across, " +
                         to_string(e.within_buffer) + " within a node, a GPU), " + count_of(g.expert.size(), "group") +
                         " of " + std::to_string(l.ep) + " at once",
                     e.all_to_all, last, sim.events()});
  } else {
    for (const auto& group : g.expert)
      for (const auto a : group)
        for (const auto b : group)
          if (a != b) flows.push_back(sim.transfer(a, b, share));
    const seconds last = all_at_once(sim, flows);
    pairs.push_back({"an expert all-to-all (" + to_string(size) + " a GPU, " + to_string(share) + " to each member), " +
                         count_of(g.expert.size(), "group") + " of " + std::to_string(l.ep) + " at once",
                     e.all_to_all, last, sim.events()});
  }
  if (l.etp > 1) {
    // The rows gathered over each expert-tensor-parallel group, a ring.
    const auto ring = fabric::repeated_ring_steps(f.topology, g.expert_tensor,
                                                  e.etp_gathered / static_cast<double>(l.etp), l.etp - 1);
    pairs.push_back({"the expert rows' all-gather (" + to_string(e.etp_gathered) + "), " +
                         count_of(g.expert_tensor.size(), "group") + " of " + std::to_string(l.etp) + " at once",
                     e.etp_collective, ring.time, ring.events});
  }
}

//! The ranks that share weights (data and context): a step's gradient all-reduce, or ZeRO's reduce-scatter and
//! its parameter all-gathers (one; under ZeRO-3 one per micro-batch pass, as the step model counts). A
//! mixture's routed experts reduce over their own expert-data-parallel groups after the rest (as price() adds
//! them), each its share of the frame, and gather what the step model says a gather assembles.
inline void add_weight_sync_pair(std::vector<simulated_pair>& pairs, const model::parallel_layout& l,
                                 const model::compressor_cost& codec, const model::parallel_step_cost& r,
                                 const fabric_binding& f, const placed_groups& g) {
  const double expert_share = r.stage_parameters > 0 ? r.expert_parameters / r.stage_parameters : 0.0;
  const std::size_t m_dense = l.dp * l.cp, m_experts = model::expert_data_parallel(l);
  if (m_dense <= 1 && (expert_share <= 0 || m_experts <= 1)) return;
  const bytes grads = r.gradient_frame, params = r.gathered_dense + r.gathered_experts;
  const std::string coded = l.codec.empty() ? "" : ", " + l.codec + " frames";
  const double gathers = model::parameter_gathers(l, r.micro_batches);
  const auto over = [&](const std::vector<std::vector<std::uint32_t>>& groups, std::size_t m, double share,
                        bytes gathered) {
    fabric::collective_result sim{};
    if (m <= 1 || share <= 0) return sim;
    const double chunks = static_cast<double>(m);
    const bytes frame = share * grads;
    if (codec.gathered)  // frames that cannot be summed on the way go round whole: every rank's to every other
      sim = fabric::repeated_ring_steps(f.topology, groups, frame, m - 1);
    else
      sim = fabric::repeated_ring_steps(f.topology, groups, frame / chunks, (l.zero_stage == 0 ? 2 : 1) * (m - 1));
    if (gathers > 0) {
      const auto ag = fabric::repeated_ring_steps(f.topology, groups, gathered / chunks, m - 1);
      sim = {sim.time + gathers * ag.time, sim.events + static_cast<std::uint64_t>(gathers) * ag.events};
    }
    return sim;
  };
  const auto dense = over(g.weights, m_dense, 1.0 - expert_share, r.gathered_dense),
             experts = over(g.expert_data, m_experts, expert_share, r.gathered_experts);
  // Each pipeline flush ends in them (model::parallel_layout::flushes): the same collectives again, one after the
  // other.
  const double flushes = static_cast<double>(l.flushes);
  const std::string gathered =
      gathers > 1 ? units::detail::format_number(gathers) + " parameter all-gathers" : "parameter all-gather";
  std::string what = codec.gathered      ? "gradient all-gather (" + to_string(grads) + coded + ")"
                     : l.zero_stage == 0 ? "gradient all-reduce (" + to_string(grads) + coded + ")"
                                         : "ZeRO-" + std::to_string(l.zero_stage) + " gradient reduce-scatter (" +
                                               to_string(grads) + coded + ")";
  if (gathers > 0) what += " and " + gathered + " (" + to_string(params) + ")";
  what += ", " + count_of(g.weights.size(), "group") + " of " + std::to_string(m_dense);
  if (expert_share > 0)
    what += " (the routed experts' " + units::detail::format_number(100.0 * expert_share) + "%" +
            (m_experts > 1 ? " over " + count_of(g.expert_data.size(), "group") + " of " + std::to_string(m_experts)
                           : std::string(", each slice on one rank: nothing to reduce")) +
            ")";
  what += " at once";
  if (l.flushes > 1) what += ", after each of " + std::to_string(l.flushes) + " pipeline flushes";
  pairs.push_back(
      {what, r.dp_collectives, flushes * (dense.time + experts.time), l.flushes * (dense.events + experts.events)});
}
}  // namespace detail

//! The layout's transfers on a fabric binding with one place per GPU (hierarchy_fabric, or your own), simulated
//! and as the step model predicts them; the layout's gradient codec priced from `codecs`.
inline std::vector<simulated_pair> simulate(const system& s, const training_workload& w,
                                            const model::parallel_layout& l, const fabric_binding& f,
                                            const std::vector<model::compressor_cost>& codecs) {
  const std::size_t n = l.gpus();
  trinity::detail::require(f.ranks.size() == n, "fabric",
                           "places " + std::to_string(f.ranks.size()) + " ranks; the layout runs " + std::to_string(n));
  const auto job = job_of(w, l.dp);
  const auto c = cluster_of(s, w);
  const auto& codec = gradient_codec(codecs, l.codec);
  const auto r = model::price(job, c, l, codec);
  const auto x = model::layer(job, c, l);
  const auto groups = detail::place_groups(l, f);
  const auto count = detail::count_of;
  std::vector<simulated_pair> pairs;
  const double T = static_cast<double>(l.micro_batch) * static_cast<double>(job.sequence) / static_cast<double>(l.cp);
  const bytes activation{T * static_cast<double>(job.shape.hidden) * 2.0};
  if (l.tp > 1) {
    const auto& g = groups.tp;
    const auto sim = fabric::repeated_ring_steps(f.topology, g, activation / static_cast<double>(l.tp), 2 * (l.tp - 1));
    pairs.push_back({"tensor-parallel all-reduce of one layer's activation (" + to_string(activation) + "), " +
                         count(g.size(), "group") + " of " + std::to_string(l.tp) + " at once",
                     x.all_reduce, sim.time, sim.events});
  }
  if (l.cp > 1) {
    const auto& g = groups.cp;
    const auto& link = model::detail::level(c, model::span(l, model::layout_group::context));
    const auto sim = fabric::repeated_ring_steps(f.topology, g, x.kv_chunk, 1);
    pairs.push_back({"one hop of the context ring's K/V chunk (" + to_string(x.kv_chunk) + "), " +
                         count(g.size(), "ring") + " of " + std::to_string(l.cp) + " at once",
                     link.latency + x.kv_chunk / link.bandwidth, sim.time, sim.events});
  }
  if (l.pp > 1) {
    const auto& g = groups.pp;
    const bytes p2p = activation / static_cast<double>(l.tp);
    const auto& link = model::detail::level(c, model::span(l, model::layout_group::pipeline));
    fabric::simulator sim(f.topology);
    std::vector<std::size_t> flows;
    for (const auto& pipe : g)
      for (std::size_t i = 0; i + 1 < pipe.size(); ++i) flows.push_back(sim.transfer(pipe[i], pipe[i + 1], p2p));
    const seconds last = detail::all_at_once(sim, flows);
    pairs.push_back({"an activation (" + to_string(p2p) + " a GPU) from every stage to the next, " +
                         count(g.size(), "pipeline") + " of " + std::to_string(l.pp) + " at once",
                     link.latency + p2p / link.bandwidth, last, sim.events()});
  }
  if (job.shape.moe() && l.ep > 1) detail::add_expert_pairs(pairs, job, c, l, f, groups, T);
  detail::add_weight_sync_pair(pairs, l, codec, r, f, groups);
  if (r.embedding_bytes > bytes{}) {
    // The embedding group's gradient, summed once a step between each pipeline's first and last stage: a ring of
    // two, a half each way and back.
    std::vector<std::vector<std::uint32_t>> ends;
    for (const auto& pipe : groups.pp) ends.push_back({pipe.front(), pipe.back()});
    const auto sim = fabric::repeated_ring_steps(f.topology, ends, r.embedding_bytes / 2.0, 2);
    pairs.push_back({"the embedding group's all-reduce (" + to_string(r.embedding_bytes) +
                         "), the first and last stage of " + count(ends.size(), "pipeline") + " at once",
                     r.embedding_sync, sim.time, sim.events});
  }
  return pairs;
}

//! The same on the system's own link hierarchy.
inline std::vector<simulated_pair> simulate(const system& s, const training_workload& w,
                                            const model::parallel_layout& l, const fabric_binding& f) {
  return simulate(s, w, l, f, default_codecs_for(s));
}
inline std::vector<simulated_pair> simulate(const system& s, const training_workload& w,
                                            const model::parallel_layout& l) {
  return simulate(s, w, l, hierarchy_fabric(s, l.gpus()));
}

}  // namespace trinity::plan
