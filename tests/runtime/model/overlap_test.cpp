#include <catch2/catch.hpp>

#include <trinity/io/json_object.hpp>
#include <trinity/io/parallel_layout.hpp>
#include <trinity/model/overlap.hpp>
#include <trinity/model/parallel_training.hpp>

#include <algorithm>
#include <string>

namespace model_overlap_test {

using namespace trinity;
using namespace trinity::model;

namespace {
// The schedule itself, bucket by bucket: each starts when ready and when the one before it is done.
seconds simulated(seconds comm, seconds window, int n) {
  seconds done{};
  for (int i = 0; i < n; ++i) done = std::max(done, window * ((i + 1.0) / n)) + comm / static_cast<double>(n);
  return done - window;
}
}  // namespace

TEST_CASE("what outlasts the pass is the closed form of the bucket schedule", "[model]") {
  for (const int n : {1, 2, 3, 7, 40})
    for (const double c : {0.01, 0.5, 1.0, 2.0, 9.0}) {
      const auto closed = exposed_after_overlap(seconds{c}, seconds{1.0}, n);
      CHECK(closed.value() == Approx(simulated(seconds{c}, seconds{1.0}, n).value()).epsilon(1e-12));
    }
  // A stream that keeps up leaves the last bucket; one that does not, what the window cannot hide.
  CHECK(exposed_after_overlap(seconds{1.0}, seconds{4.0}, 4).value() == Approx(0.25));
  CHECK(exposed_after_overlap(seconds{4.0}, seconds{1.0}, 4).value() == Approx(4.0 - 0.75));
  CHECK(exposed_after_overlap(seconds{}, seconds{1.0}, 4).value() == 0.0);
  // Megatron-Core's bucket: 40M parameters, or 1M per data-parallel rank past 40 ranks.
  CHECK(megatron_bucket_parameters(8) == 40e6);
  CHECK(megatron_bucket_parameters(128) == 128e6);
  CHECK(bucket_count(70e9 / 16, 40e6) == std::ceil(70e9 / 16 / 40e6));
  CHECK(bucket_count(1e6, 40e6) == 1);
}

TEST_CASE("overlap=on hides the data-parallel collectives bucket by bucket", "[model]") {
  training_job j;
  j.shape = {8, 4096, 14336, 32, 8, 128256, true, false};
  j.sequence = 4096;
  j.global_batch = 64;
  j.flash_attention = true;
  training_cluster c;
  c.peak = flops_per_second{1e15};
  c.gemm = {0.8, 300};
  c.memory_bandwidth = bytes_per_second{3e12};
  c.memory = bytes{80e9};
  c.domain = 8;
  c.fast = {seconds{1e-6}, bytes_per_second{300e9}};
  c.slow = {seconds{5e-6}, bytes_per_second{2e9}};  // slow enough that the reduction outlasts a backward
  auto l = io::parse_parallel_layout("tp=2,dp=16,mbs=1,zero=1");
  const auto off = price(j, c, l);
  CHECK_FALSE(off.overlap);
  CHECK(off.dp_comm == off.dp_collectives);

  l.overlap = true;
  const auto on = price(j, c, l);
  CHECK(on.overlap);
  CHECK(on.dp_collectives == off.dp_collectives);
  CHECK(on.buckets == bucket_count(on.stage_parameters, 40e6));
  // The reduce-scatter under the last micro-batch's backward, the gather under the first one's forward.
  const auto x = layer(j, c, l);
  const double L = static_cast<double>(on.layers_per_stage), T = 4096.0, h = 4096, V = 128256, t = 2;
  // The last stage's backward: its layers, the logits' GEMMs and the loss's 14 bytes a logit.
  const seconds backward =
      L * (x.backward() + x.recompute) + model::detail::gemm_bwd(c, T, V / t, h) + seconds{14.0 * T * V / t / 3e12};
  const seconds forward = L * x.forward();
  const auto link = model::detail::as_collective(c.slow);  // 32 ranks span four scale-up domains
  const seconds reduce = gradient_reduction(16, on.stage_parameters, 2.0, 1, uncoded_gradient(), link).comm;
  const seconds gather = ring_all_gather_time(16, bytes{on.stage_parameters * 2.0}, link);
  CHECK(off.dp_collectives.value() == Approx((reduce + gather).value()).epsilon(1e-12));
  CHECK(on.dp_comm.value() == Approx((exposed_after_overlap(reduce, backward, on.buckets) +
                                      exposed_after_overlap(gather, forward, on.buckets))
                                         .value())
                                  .epsilon(1e-12));
  CHECK(on.dp_comm < off.dp_comm);
  CHECK(on.step.value() == Approx((off.step - off.dp_comm + on.dp_comm).value()).epsilon(1e-12));

  // The job's default applies where the layout says nothing; the layout's word wins.
  j.overlap_dp = true;
  l.overlap.reset();
  CHECK(price(j, c, l).dp_comm == on.dp_comm);
  l.overlap = false;
  CHECK(price(j, c, l).dp_comm == off.dp_comm);
}

TEST_CASE("a layout takes overlap=on|off and says it back", "[model][io]") {
  CHECK(io::parse_parallel_layout("tp=2,overlap=on").overlap == true);
  CHECK(io::parse_parallel_layout("tp=2,overlap=off").overlap == false);
  CHECK_FALSE(io::parse_parallel_layout("tp=2").overlap.has_value());
  CHECK(to_string(io::parse_parallel_layout("tp=2,overlap=on")).ends_with(",overlap=on"));
  CHECK(to_string(io::parse_parallel_layout("tp=2")).find("overlap") == std::string::npos);
  CHECK(io::parse_parallel_layout(to_string(io::parse_parallel_layout("tp=2,dp=4,overlap=off"))) ==
        io::parse_parallel_layout("tp=2,dp=4,overlap=off"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("overlap=yes"), Catch::Contains("overlap=yes: use on or off"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("overlapp=on"), Catch::Contains("overlap"));
}

TEST_CASE("the recorded run of shard::data_parallel's buckets meets the prediction where the pass is host-free",
          "[model]") {
  // bench/overlap.cpp, recorded: where the backward pass is mostly sleep (a device's compute) the prediction is
  // within 40% of the measured exposed time; where it is mostly data_parallel's own host work, that work
  // slows the collectives on the shared cores and the model, which leaves that out, predicts too little.
  const auto j = io::load(std::string(TRINITY_SOURCE_DIR) + "/bench/results/overlap-ci.json");
  int seen = 0;
  for (const auto& b : j.at("benchmarks")) {
    const std::string name = b.at("name");
    const double ratio = b.at("predicted_over_measured").get<double>();
    const double predicted = b.at("exposed_predicted_ms").get<double>();
    // The prediction in the file is the model's own for the file's measured inputs.
    CHECK(predicted == Approx(1e3 * exposed_after_overlap(seconds{1e-3 * b.at("reduce_ms").get<double>()},
                                                          seconds{1e-3 * b.at("window_ms").get<double>()},
                                                          b.at("buckets").get<double>())
                                        .value())
                           .epsilon(1e-9));
    if (name.find("/25/") != std::string::npos) {
      CHECK(ratio < 1.0);
    } else {
      CHECK(ratio > 0.7);
      CHECK(ratio < 1.4);
    }
    ++seen;
  }
  CHECK(seen == 3);
}

}  // namespace model_overlap_test
