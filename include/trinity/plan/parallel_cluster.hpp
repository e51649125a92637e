#pragma once
//! \file
//! A planner system as the parallel step model sees it (model/parallel_training.hpp): the device's peak at
//! the training precision, its device memory (tiers[0]), the tier below it (tiers[1]) that optimizer states
//! offload to, and the link hierarchy. The scale-up domain shares
//! `interconnect`; past it, ranks talk over `scale_out`. A system without a scale-out link is one domain.
//! Each level runs at what NCCL's collectives get of its link (link_descriptor::collective_rate): every byte
//! the step model sends is a collective's or a pipeline's send and receive, which NCCL drives the same way.

#include <string_view>

#include <trinity/model/gemm.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::plan {

inline model::training_cluster cluster_of(const system& s, model::gemm_efficiency gemm, double elementwise_traffic,
                                          std::string_view precision = "bf16") {
  model::training_cluster c;
  // fp8 training runs its layers' GEMMs at the fp8 rate and the rest at the 16-bit one (model::training_job::fp8).
  const bool fp8 = precision == "fp8";
  c.peak = s.device.rate(fp8 ? "bf16" : precision);
  if (fp8 && s.device.lists_rate("fp8")) {
    c.fp8_peak = s.device.rate("fp8");
    c.fp8_gemm_share = s.device.serving.fp8_gemm_share;  // fitted to fp8 serving runs (measured_serving.hpp)
  }
  c.gemm = gemm;
  c.attention = s.device.attention;
  c.memory_bandwidth = s.tiers.at(0).bandwidth;
  c.memory = s.tiers.at(0).capacity;
  c.fast = {s.interconnect.latency, s.interconnect.collective_rate()};
  c.domain = scale_up_devices(s);
  c.slow = s.scale_out ? model::link_level{s.scale_out->latency, s.scale_out->collective_rate()} : c.fast;
  c.elementwise_traffic = elementwise_traffic;
  if (s.tiers.size() > 1) {  // the first tier below device memory holds offloaded optimizer states
    c.host = {s.tiers[1].latency, s.tiers[1].bandwidth};
    c.host_memory = s.tiers[1].capacity;
  }
  return c;
}

}  // namespace trinity::plan
