// Heterogeneous producer/consumer training planned (plan/hetero_train.hpp): the choice against closed forms,
// the paper's three answers, bubbles when a phase outruns the producers, and the workload read from JSON.
#include <catch2/catch.hpp>

#include <trinity/workloads/registry.hpp>
#include <trinity/plan/hetero_train.hpp>

#include <cmath>

namespace plan_hetero_train_test {

using namespace trinity;

TEST_CASE("the preset's plan is the fewest producers and streams that keep every consumer training", "[plan][hetero]") {
  const auto s = *plan::presets::find("dgx-h100");
  const auto w = plan::presets::wan22_t2v_hetero();
  const auto r = plan::plan_hetero_train(s, w);
  REQUIRE(r.candidates.size() == 1 + w.max_producers * w.max_streams);
  const auto& c = r.chosen();
  const auto& ph = w.phases[0];
  const double C = 64;
  // Producers: the consumers' demand over one producer's rate. Streams: the demand's bytes over one cap.
  CHECK(c.plan.disaggregated);
  CHECK(c.plan.producers == static_cast<std::size_t>(std::ceil(C * ph.consume_per_second / ph.produce_per_second)));
  CHECK(c.plan.streams ==
        static_cast<std::size_t>(std::ceil(C * ph.consume_per_second * ph.sample.value() / w.stream_cap.value())));
  CHECK(c.plan.streams == 10);
  CHECK(c.cost.samples_per_second == Approx(C * ph.consume_per_second));
  CHECK(c.cost.utilization == Approx(1.0));
  CHECK(c.cost.link_busy == Approx(C * ph.sample.value() / w.link.value()));
  // The baseline: each consumer spends 1/train + 1/(its own encoding rate) per sample.
  const auto& b = r.candidates[r.baseline];
  CHECK_FALSE(b.plan.disaggregated);
  const double own = ph.produce_per_second * w.encode_high / w.encode_low;
  CHECK(b.cost.samples_per_second == Approx(C / (1 / ph.consume_per_second + 1 / own)));
  CHECK(b.cost.utilization == Approx((1 / ph.consume_per_second) / (1 / ph.consume_per_second + 1 / own)));
  // Energy: consumers and producers powered for a sample's wall time.
  CHECK(c.cost.total.energy.value() == Approx((C * s.device.power.value() + 64 * 350.0) / (C * ph.consume_per_second)));
}

TEST_CASE("the plan answers the paper's three questions", "[plan][hetero][paper]") {
  const auto w = plan::presets::wan22_t2v_hetero();
  const auto a = plan::answers(w);
  CHECK(a.producers_per_consumer == Approx(3.35e12 / 864e9));
  CHECK(std::ceil(a.producers_per_consumer) == 4);  // "four low-end GPUs replace one high-end GPU"
  CHECK(a.one_stream.value() == Approx(50e6));      // one thread's cap
  CHECK(a.streams_to_fill == 25);                   // 1.25 GB/s / 50 MB/s
  CHECK(a.nodes_fed == 22);                         // "about 20 nodes": floor(1.25e9 / (8 * 7,096,320 B/s))
  const auto s = *plan::presets::find("dgx-h100");
  const auto r = plan::plan_hetero_train(s, w);
  const auto& t = r.explanation.trades;
  REQUIRE(t.size() == 4);
  CHECK_THAT(t[1], Catch::Contains("so 4 producers replace one consumer-class device"));
  CHECK_THAT(t[2], Catch::Contains("25 streams fill"));
  CHECK_THAT(t[3], Catch::Contains("feeds 22 nodes of 8"));
}

TEST_CASE("when the data shifts past what the producers make, the consumers wait: the model's bubble",
          "[plan][hetero]") {
  const auto s = *plan::presets::find("dgx-h100");
  auto w = plan::presets::wan22_t2v_hetero();
  w.max_producers = 100;
  w.max_streams = 16;
  // Half the samples are long clips: a latent 2.5x larger, encoded 2.5x slower.
  auto longer = w.phases[0];
  longer.sample = longer.sample * 2.5;
  longer.produce_per_second /= 2.5;
  w.phases.push_back(longer);
  const auto r = plan::plan_hetero_train(s, w);
  const auto& c = r.chosen();
  REQUIRE(c.plan.disaggregated);
  CHECK(c.plan.producers == 100);  // every producer, and still short in the long clips' phase
  // The fewest streams that carry the long clips' 40 samples/s: ceil(40 x 17.7 MB / 50 MB/s).
  CHECK(c.plan.streams == static_cast<std::size_t>(std::ceil(40 * longer.sample.value() / 50e6)));
  const model::stream_link link{w.link, c.plan.streams, w.stream_cap};
  CHECK(c.cost.bubble == Approx(model::bubble_fraction(100, 64, w.phases, link)));
  CHECK(c.cost.bubble == Approx(1 - (1.0 / 64 + 1.0 / 64) / (1.0 / 64 + 1.0 / 40)));
  CHECK_THAT(r.explanation.binding_after, Catch::Contains("L40S producers (100 make 40 samples/s)"));
  // Fewer producers would make the colocated baseline the better plan: it is priced, not assumed away.
  CHECK(r.candidates[r.baseline].cost.total.time > c.cost.total.time);
}

TEST_CASE("a hetero-train workload reads from JSON, every key checked", "[plan][hetero][io]") {
  const auto s = *plan::presets::find("dgx-h100");
  const auto f = workloads::read_workload(io::parse(R"({"name": "h", "type": "hetero-train", "consumers": 16,
      "producer": {"name": "L4", "power": "72W"}, "max_producers": 40, "link": "25Gbps", "stream_cap": "100MB/s",
      "encode_high": 4, "encode_low": 1,
      "phases": [{"samples": 3, "sample": "4MB", "produce_per_second": 0.5, "consume_per_second": 2}]})",
                                                    "test.json"),
                                          s);
  const auto& w = f.as<plan::hetero_train_workload>();
  CHECK(w.consumers == 16);
  CHECK(w.producer.power.value() == 72);
  CHECK(w.max_producers == 40);
  CHECK(w.link.value() == Approx(25e9 / 8));
  CHECK(w.phases.at(0).samples == 3);
  const auto r = plan::plan_hetero_train(s, w);
  CHECK(r.chosen().plan.producers == 40);  // 16 x 2 / 0.5 = 64 wanted, 40 available: all of them

  const auto error = [&](const char* text) {
    try {
      workloads::read_workload(io::parse(text, "test.json"), s);
    } catch (const invalid_input& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(error(R"({"name": "h", "type": "hetero-train", "producer": {"name": "L4"}, "link": "1GB/s",
      "encode_high": 1, "encode_low": 1, "max_stream": 4, "phases": []})"),
             Catch::Contains("max_stream") && Catch::Contains("max_streams"));
  CHECK_THAT(error(R"({"name": "h", "type": "hetero-train", "producer": {"name": "L4"}, "link": "1GB/s",
      "encode_high": 1, "encode_low": 1,
      "phases": [{"sample": "0B", "produce_per_second": 1, "consume_per_second": 1}]})"),
             Catch::StartsWith("phases[0].sample"));
}

}  // namespace plan_hetero_train_test
