#pragma once
//! \file
//! `trinity model hetero`: heterogeneous training over a message queue (the AI Trinity paper, §4.2): what the
//! streams carry, how many consumer nodes they feed, how many producer devices stand in for each consumer device
//! freed of encoding, and, for a producer and consumer count, the consumers' utilization; as JSON and as text.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <ostream>

#include <trinity/model/hetero.hpp>
#include <trinity/reports/text.hpp>
#include <trinity/units/format.hpp>

namespace trinity::reports {

struct hetero_question {
  model::presets::hetero_training training = model::presets::wan22_t2v();
  std::size_t producers = 0, consumers = 0;  //!< both 0: no utilization asked
};

namespace detail {
struct hetero_answer {
  bytes_per_second carried;
  std::size_t fill;
  bytes_per_second node_bytes;
  std::size_t nodes, nodes_filled;
  double ratio;
  std::size_t whole;
  std::optional<double> utilization;
};
inline hetero_answer answer(const hetero_question& q) {
  const auto& h = q.training;
  const double node_rate = static_cast<double>(h.devices_per_node) * h.phase.consume_per_second;
  auto filled = h.link;
  filled.streams = std::max(filled.streams, model::streams_to_fill(h.link.bandwidth, h.link.stream_cap));
  hetero_answer a{model::carried(h.link),
                  model::streams_to_fill(h.link.bandwidth, h.link.stream_cap),
                  bytes_per_second{node_rate * h.phase.sample.value()},
                  model::nodes_supported(h.link, node_rate, h.phase.sample),
                  model::nodes_supported(filled, node_rate, h.phase.sample),
                  model::producers_per_consumer_freed(h.encode_high, h.encode_low),
                  model::whole_producers_per_consumer_freed(h.encode_high, h.encode_low),
                  std::nullopt};
  if (q.producers > 0) a.utilization = model::consumer_utilization(q.producers, q.consumers, h.phase, h.link);
  return a;
}
}  // namespace detail

[[nodiscard]] inline nlohmann::json to_json(const hetero_question& q) {
  const auto& h = q.training;
  const auto a = detail::answer(q);
  nlohmann::json out{{"model", "hetero"},
                     {"link_bytes_per_second", h.link.bandwidth.value()},
                     {"streams", h.link.streams},
                     {"stream_cap_bytes_per_second", h.link.stream_cap.value()},
                     {"carried_bytes_per_second", a.carried.value()},
                     {"streams_to_fill_link", a.fill},
                     {"sample_bytes", h.phase.sample.value()},
                     {"node_bytes_per_second", a.node_bytes.value()},
                     {"nodes_supported", a.nodes},
                     {"nodes_supported_with_streams_to_fill", a.nodes_filled},
                     {"producers_per_consumer_freed", a.ratio},
                     {"producers_per_consumer_freed_whole", a.whole}};
  if (a.utilization) {
    out["producers"] = q.producers;
    out["consumers"] = q.consumers;
    out["consumer_utilization"] = *a.utilization;
    out["bubble_fraction"] = 1 - *a.utilization;
  }
  return out;
}

inline void print(std::ostream& os, const hetero_question& q) {
  const auto& h = q.training;
  const auto a = detail::answer(q);
  os << "Heterogeneous training over a message queue (paper §4.2): producers encode, consumers train\n"
     << "  the streams carry min(link, N x cap) = min(" << to_string(h.link.bandwidth) << ", " << h.link.streams
     << " x " << to_string(h.link.stream_cap) << ") = " << to_string(a.carried) << "; " << a.fill
     << " streams fill the link\n"
     << "  a consumer node takes " << h.devices_per_node << " x " << significant(h.phase.consume_per_second, 4)
     << " samples/s x " << to_string(h.phase.sample) << " = " << to_string(a.node_bytes) << ": these streams feed "
     << a.nodes << " node(s), " << a.fill << " streams feed " << a.nodes_filled << "\n"
     << "  encoding moved off the consumers: e_high / e_low = " << significant(a.ratio, 3) << ", so " << a.whole
     << " producer devices stand in for each consumer device freed\n";
  if (a.utilization)
    os << "  " << q.producers << " producers, " << q.consumers << " consumers: utilization "
       << significant(*a.utilization, 3) << ", bubble " << significant(1 - *a.utilization, 3) << "\n";
}

}  // namespace trinity::reports
