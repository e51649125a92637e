#pragma once
//! \file
//! The bandwidth -> memory model of the paper (§4.1.2). When N devices of
//! M_avail each cannot hold the M_total a training run needs, the memory
//! deficit M_miss = max(0, M_total - N·M_avail) must be streamed in instead,
//! and the traffic per iteration becomes
//!   C_comm = T_allreduce·(P + G + O) + k·M_miss,
//! with k the bytes sent per byte of missing memory. Worked example: 400 GB on
//! 2 x 100 GB -> 200 GB deficit; k = 0.5 -> 100 GB more traffic per iteration.

#include <cstddef>

#include <trinity/opt_in.hpp>
#include <trinity/error.hpp>
#include <trinity/resources/priced_trade.hpp>
#include <trinity/resources/resource.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::model {

//! M_miss = max(0, M_total - N·M_avail).
constexpr bytes memory_deficit(bytes total, bytes available_per_device, std::size_t devices) {
  trinity::detail::require(total >= bytes{} && trinity::detail::is_finite(total.value()), "total",
                           "must be finite and not negative");
  trinity::detail::require(available_per_device > bytes{} && trinity::detail::is_finite(available_per_device.value()),
                           "avail", "must be positive and finite");
  trinity::detail::require(devices >= 1, "devices", "must be at least 1");
  const bytes held = available_per_device * static_cast<double>(devices);
  return total > held ? total - held : bytes{};
}

//! The fewest devices of `available_per_device` that hold `total` with no deficit.
constexpr std::size_t devices_to_fit(bytes total, bytes available_per_device) {
  trinity::detail::require(total >= bytes{} && trinity::detail::is_finite(total.value()), "total",
                           "must be finite and not negative");
  trinity::detail::require(available_per_device > bytes{} && trinity::detail::is_finite(available_per_device.value()),
                           "avail", "must be positive and finite");
  const double ratio = total / available_per_device;
  auto n = static_cast<std::size_t>(ratio);
  if (static_cast<double>(n) < ratio) ++n;
  return n == 0 ? 1 : n;
}

//! Bytes each rank sends per byte of state in a ring all-reduce: 2(N-1)/N
//! (the bus-bandwidth factor of nccl-tests).
constexpr double ring_allreduce_factor(std::size_t devices) {
  trinity::detail::require(devices >= 1, "devices", "must be at least 1");
  return 2.0 * static_cast<double>(devices - 1) / static_cast<double>(devices);
}

//! C_comm = T_allreduce·(P + G + O) + k·M_miss.
constexpr bytes communication_cost(bytes synchronized_state, double allreduce_factor, double k, bytes deficit) {
  trinity::detail::require(synchronized_state >= bytes{} && trinity::detail::is_finite(synchronized_state.value()),
                           "sync_bytes", "must be finite and not negative");
  trinity::detail::require(allreduce_factor >= 0 && trinity::detail::is_finite(allreduce_factor), "allreduce_factor",
                           "must be finite and not negative");
  trinity::detail::require(k >= 0 && trinity::detail::is_finite(k), "k", "must be finite and not negative");
  trinity::detail::require(deficit >= bytes{} && trinity::detail::is_finite(deficit.value()), "deficit",
                           "must be finite and not negative");
  return allreduce_factor * synchronized_state + k * deficit;
}

//! Bandwidth -> memory as a TradeoffPolicy: stream the deficit over the links
//! instead of holding it.
struct bandwidth_for_memory {
  using policy_concept = tradeoff_policy_tag;
  using spends = resources::bandwidth;
  using saves = resources::memory;

  double k = 1.0;                 //!< bytes sent per byte of missing memory
  bytes synchronized_state{};     //!< P + G + O, all-reduced every iteration
  double allreduce_factor = 0.0;  //!< T_allreduce, e.g. ring_allreduce_factor(N)

  struct input {
    bytes total;                 //!< M_total
    bytes available_per_device;  //!< M_avail
    std::size_t devices;         //!< N
  };

  [[nodiscard]] constexpr priced_trade<spends, saves> price(const input& in) const {
    const bytes deficit = memory_deficit(in.total, in.available_per_device, in.devices);
    priced_trade<spends, saves> t{};
    t.before.bandwidth = communication_cost(synchronized_state, allreduce_factor, k, bytes{});
    t.before.memory = in.total;
    t.after.bandwidth = communication_cost(synchronized_state, allreduce_factor, k, deficit);
    t.after.memory = in.total - deficit;
    return t;
  }
};

}  // namespace trinity::model
