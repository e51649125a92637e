#pragma once
//! \file
//! `trinity model deficit`: the bandwidth -> memory trade of the AI Trinity paper (§4.1.2): the memory a run
//! misses on N devices and the traffic that stands in for it, C_comm = T_allreduce·(P+G+O) + k·M_miss, optionally
//! timed over a link; as JSON and as text.

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <ostream>

#include <trinity/model/deficit.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

struct deficit_question {
  bytes total{}, available{};  //!< M_total, and M_avail per device
  std::size_t devices = 1;
  double k = 1;                 //!< bytes sent per byte of missing memory
  bytes synchronized{};         //!< P + G + O, the state all-reduced each iteration
  double allreduce_factor = 0;  //!< T_allreduce: bytes sent per byte of synchronized state
  std::optional<bytes_per_second> link;
};

namespace detail {
struct deficit_answer {
  bytes deficit, base, comm;
  priced_trade<resources::bandwidth, resources::memory> trade;
  std::size_t needed;
};
inline deficit_answer answer(const deficit_question& q) {
  return {model::memory_deficit(q.total, q.available, q.devices),
          model::communication_cost(q.synchronized, q.allreduce_factor, q.k, bytes{}),
          model::communication_cost(q.synchronized, q.allreduce_factor, q.k,
                                    model::memory_deficit(q.total, q.available, q.devices)),
          model::bandwidth_for_memory{q.k, q.synchronized, q.allreduce_factor}.price({q.total, q.available, q.devices}),
          model::devices_to_fit(q.total, q.available)};
}
}  // namespace detail

[[nodiscard]] inline nlohmann::json to_json(const deficit_question& q) {
  using json = nlohmann::json;
  const auto [deficit, base, comm, trade, needed] = detail::answer(q);
  json out{{"model", "deficit"},
           {"total_bytes", q.total.value()},
           {"available_per_device_bytes", q.available.value()},
           {"devices", q.devices},
           {"k", q.k},
           {"allreduce_factor", q.allreduce_factor},
           {"synchronized_state_bytes", q.synchronized.value()},
           {"deficit_bytes", deficit.value()},
           {"extra_traffic_bytes", (comm - base).value()},
           {"synchronization_traffic_bytes", base.value()},
           {"communication_bytes", comm.value()},
           {"devices_to_fit", needed},
           {"trade",
            {{"spends", "bandwidth"},
             {"saves", "memory"},
             {"spent_bytes", trade.spent().value()},
             {"saved_bytes", trade.saved().value()},
             {"memory_per_byte_sent", deficit > bytes{} && q.k > 0 ? json(trade.rate()) : json(nullptr)}}}};
  if (q.link) {
    out["link_bandwidth_bytes_per_second"] = q.link->value();
    out["extra_transfer_seconds"] = ((comm - base) / *q.link).value();
    out["communication_seconds"] = (comm / *q.link).value();
  }
  return out;
}

inline void print(std::ostream& os, const deficit_question& q) {
  const auto [deficit, base, comm, trade, needed] = detail::answer(q);
  os << "Bandwidth -> memory: the memory deficit and the traffic that replaces it (paper §4.1.2)\n"
     << "  the run needs M_total = " << to_string(q.total) << "; " << q.devices << " device(s) x "
     << to_string(q.available) << " hold " << to_string(q.available * static_cast<double>(q.devices)) << "\n"
     << "  deficit M_miss = max(0, M_total - N·M_avail) = " << to_string(deficit) << "\n"
     << "  extra traffic k·M_miss = " << significant(q.k, 4) << " x " << to_string(deficit) << " = "
     << to_string(comm - base) << " per iteration\n"
     << "  C_comm = T_allreduce·(P+G+O) + k·M_miss = " << significant(q.allreduce_factor, 3) << " x "
     << to_string(q.synchronized) << " + " << to_string(comm - base) << " = " << to_string(comm) << " per iteration\n";
  if (deficit > bytes{}) {
    os << "Trade: " << to_string(trade.spent()) << " of traffic per iteration stands in for "
       << to_string(trade.saved()) << " of memory";
    if (q.k > 0) os << " (" << significant(trade.rate(), 4) << " bytes of memory per byte sent)";
    os << ".\n  Without it, " << needed << " devices of " << to_string(q.available) << " would be needed.\n";
  } else {
    os << "No trade needed: the devices hold everything (" << needed << " would suffice).\n";
  }
  if (q.link)
    os << "  over " << to_string(*q.link) << ": " << to_string((comm - base) / *q.link)
       << " of extra transfer per iteration, " << to_string(comm / *q.link) << " in all\n";
}

}  // namespace trinity::reports
