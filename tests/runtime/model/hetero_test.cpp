// The heterogeneous producer/consumer model (model/hetero.hpp): its closed forms by hand, and the paper's
// three figures (§4.2.2) from the preset's stated inputs.
#include <catch2/catch.hpp>

#include <trinity/model/hetero.hpp>

#include <cmath>
#include <vector>

namespace model_hetero_test {

using namespace trinity;

TEST_CASE("streams carry the least of the link and their caps", "[model][hetero]") {
  const bytes_per_second link{1.25e9}, cap{50e6};
  CHECK(model::carried({link, 1, cap}).value() == 50e6);
  CHECK(model::carried({link, 10, cap}).value() == 500e6);
  CHECK(model::carried({link, 100, cap}).value() == 1.25e9);
  CHECK(model::carried({link, 3, bytes_per_second{}}).value() == 1.25e9);  // uncapped
  CHECK(model::streams_to_fill(link, cap) == 25);
  CHECK(model::streams_to_fill(link, bytes_per_second{49e6}) == 26);
  CHECK(model::carried({link, 25, cap}) == link);
  CHECK_THROWS_WITH(model::carried({link, 0, cap}), Catch::Contains("link.streams"));
}

TEST_CASE("the consumers wait on the slowest of producers, streams and link", "[model][hetero]") {
  const model::stream_link l{bytes_per_second{1e9}, 4, bytes_per_second{100e6}};  // carries 400 MB/s
  const model::sample_phase p{1, bytes{10e6}, 5, 2};                              // 40 samples/s over the link
  CHECK(model::supply(4, p, l) == 20);                                            // four producers make 20 samples/s
  CHECK(model::supply(10, p, l) == 40);                            // ten would make 50: the streams carry 40
  CHECK(model::consumer_utilization(4, 5, p, l) == 1.0);           // 5 consumers take 10 samples/s
  CHECK(model::consumer_utilization(4, 20, p, l) == Approx(0.5));  // 20 take 40
  // Two phases: 100 small samples, then 100 large ones the streams carry at half the rate.
  model::sample_phase big = p;
  big.sample = bytes{40e6};  // 10 samples/s over the link
  const std::vector<model::sample_phase> phases{{100, bytes{10e6}, 5, 2}, {100, bytes{40e6}, 5, 2}};
  // 10 consumers take 20 samples/s; ten producers make 50. Phase 1: 20/s, 5 s busy. Phase 2: 10/s, 10 s wall,
  // 5 s busy. Idle 5 of 15 s.
  CHECK(model::bubble_fraction(10, 10, phases, l) == Approx(5.0 / 15.0));
  CHECK(model::bubble_fraction(10, 5, phases, l) == Approx(0.0));  // 10 samples/s is what phase 2 carries
}

TEST_CASE("the preset reproduces the paper's three figures from its stated inputs", "[model][hetero][paper]") {
  const auto h = model::presets::wan22_t2v();
  // A single thread is capped at 50 MB/s; 25 streams fill the 10 Gbps link.
  CHECK(model::carried(h.link).value() == 50e6);
  CHECK(model::streams_to_fill(h.link.bandwidth, h.link.stream_cap) == 25);
  // Four low-end GPUs replace one high-end GPU: 3.35 TB/s over 864 GB/s, rounded up.
  const double ratio = model::producers_per_consumer_freed(h.encode_high, h.encode_low);
  CHECK(ratio == Approx(3.877).epsilon(1e-3));
  CHECK(std::ceil(ratio) == 4);
  // About 20 nodes over 10 Gbps: a node takes 8 latents of 7.1 MB per second.
  CHECK(h.phase.sample.value() == 7'096'320);
  auto filled = h.link;
  filled.streams = 25;
  const auto nodes = model::nodes_supported(filled, 8 * h.phase.consume_per_second, h.phase.sample);
  CHECK(nodes == 22);
  CHECK(model::nodes_supported(h.link, 8 * h.phase.consume_per_second, h.phase.sample) == 0);  // one stream: none
}

}  // namespace model_hetero_test
