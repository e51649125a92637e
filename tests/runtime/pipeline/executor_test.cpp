#include <trinity/pipeline.hpp>
#include <trinity/pipeline/kernels.hpp>

#include <catch2/catch.hpp>

#include <atomic>
#include <set>
#include <stdexcept>

namespace pipeline_executor_test {

using namespace trinity;
using pipeline::device_config;
using pipeline::executor;

namespace {

// Counts the samples it sees, keeps those whose id is not a multiple of `drop_every`.
struct counting_copy final : pipeline::resident_model {
  std::shared_ptr<std::atomic<std::size_t>> seen;
  std::size_t drop_every;
  bytes held;
  counting_copy(std::shared_ptr<std::atomic<std::size_t>> s, std::size_t d, bytes h)
      : seen(std::move(s)), drop_every(d), held(h) {}
  [[nodiscard]] bytes memory() const override { return held; }
  bool step(pipeline::sample& s, std::size_t) override {
    ++*seen;
    s.score += 1;
    return drop_every == 0 || s.id % drop_every != 0;
  }
};

pipeline::model_operator counting(std::string name, std::shared_ptr<std::atomic<std::size_t>> seen,
                                  std::size_t drop_every, bytes footprint, bytes holds = bytes{0}) {
  return {std::move(name), footprint, [=] {
            return std::unique_ptr<pipeline::resident_model>(
                new counting_copy(seen, drop_every, holds.value() ? holds : footprint));
          }};
}

pipeline::sample plain(std::uint64_t id) { return pipeline::sample{id, {}, {}, 0}; }

}  // namespace

TEST_CASE("every sample leaves once, each model sees what the one before it passed", "[pipeline][concurrent]") {
  auto a = std::make_shared<std::atomic<std::size_t>>(0), b = std::make_shared<std::atomic<std::size_t>>(0),
       c = std::make_shared<std::atomic<std::size_t>>(0);
  std::atomic<std::size_t> decoded{0};
  // Model a drops multiples of 3, b multiples of 5 (of those left); c keeps all.
  executor x({{"decode", [&](pipeline::sample&) { ++decoded; }}},
             {counting("a", a, 3, bytes{10}), counting("b", b, 5, bytes{10}), counting("c", c, 0, bytes{10})},
             {{"d0", bytes{30}, 0b111}, {"d1", bytes{20}, 0b011}, {"d2", bytes{10}, 0b100}},
             {.cpu_workers = 2, .queue_capacity = 3});
  const std::size_t n = 3000;
  const auto r = x.run(n, plain);
  std::size_t not3 = 0, not3not5 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    not3 += i % 3 != 0;
    not3not5 += i % 3 != 0 && i % 5 != 0;
  }
  CHECK(r.samples == n);
  CHECK(decoded == n);
  CHECK(r.entered == std::vector<std::size_t>{n, not3, not3not5});
  CHECK(r.passed == std::vector<std::size_t>{not3, not3not5, not3not5});
  CHECK(*a == n);
  CHECK(*b == not3);
  CHECK(*c == not3not5);
  // Devices run only what they hold.
  CHECK(r.runs[1][2] == 0);
  CHECK(r.runs[2][0] == 0);
  CHECK(r.runs[2][1] == 0);
  CHECK(r.runs[0][0] + r.runs[1][0] == n);
  // No queue ever held more than its capacity (reservations included).
  for (auto q : r.most_queued) CHECK(q <= 3);
  CHECK(r.resident == std::vector<bytes>{bytes{30}, bytes{20}, bytes{10}});
  CHECK(r.wall_seconds > 0);
  CHECK(r.mean_device_utilization() <= 1.0 + 1e-9);
  // The same executor runs again, and a run of nothing measures nothing.
  const auto again = x.run(30, plain);
  CHECK(again.samples == 30);
  CHECK(again.entered[0] == 30);
  const auto none = x.run(0, plain);
  CHECK(none.samples == 0);
  CHECK(none.wall_seconds == 0);
  CHECK(none.samples_per_second() == 0);
}

TEST_CASE("a device never holds more than its budget", "[pipeline]") {
  auto seen = std::make_shared<std::atomic<std::size_t>>(0);
  const std::vector<pipeline::model_operator> models{counting("aesthetic", seen, 0, bytes{4e9}),
                                                     counting("caption", seen, 0, bytes{30e9})};
  SECTION("a placement past the budget is refused before anything runs, naming the device and what it holds") {
    try {
      executor x({}, models, {{"gpu0", bytes{32e9}, 0b11}});
      FAIL("an overcommitted device was accepted");
    } catch (const invalid_input& e) {
      CHECK(e.field() == "placement");
      CHECK_THAT(e.what(), Catch::Contains("gpu0: caption (30 GB) beside aesthetic (4 GB)"));
    }
  }
  SECTION("exactly the budget fits") {
    executor x({}, models, {{"gpu0", bytes{34e9}, 0b11}});
    CHECK(x.run(10, plain).resident[0] == bytes{34e9});
  }
  SECTION("a copy that holds more than its model stated is refused") {
    const std::vector<pipeline::model_operator> liar{counting("ocr", seen, 0, bytes{1e9}, bytes{2e9})};
    CHECK_THROWS_WITH(executor({}, liar, {{"gpu0", bytes{80e9}, 0b1}}),
                      Catch::Contains("states 1 GB but a loaded copy holds 2 GB"));
  }
  SECTION("a model no device holds is refused") {
    CHECK_THROWS_WITH(executor({}, models, {{"gpu0", bytes{80e9}, 0b01}}),
                      Catch::Contains("caption is held by no device"));
  }
  SECTION("a holding past the pipeline's models is refused") {
    CHECK_THROWS_WITH(executor({}, models, {{"gpu0", bytes{80e9}, 0b111}}), Catch::Contains("names a model past"));
  }
}

TEST_CASE("a kernel that throws stops the run and the error reaches the caller", "[pipeline][concurrent]") {
  struct failing final : pipeline::resident_model {
    [[nodiscard]] bytes memory() const override { return bytes{1}; }
    bool step(pipeline::sample& s, std::size_t) override {
      if (s.id == 57) throw std::runtime_error("kernel failed on 57");
      return true;
    }
  };
  executor x({}, {{"m", bytes{1}, [] { return std::unique_ptr<pipeline::resident_model>(new failing); }}},
             {{"d0", bytes{1}, 1}, {"d1", bytes{1}, 1}}, {.cpu_workers = 2, .queue_capacity = 2});
  CHECK_THROWS_WITH(x.run(1000, plain), "kernel failed on 57");
}

TEST_CASE("co-resident models share a device: each device runs both when both have work", "[pipeline][concurrent]") {
  auto a = std::make_shared<std::atomic<std::size_t>>(0), b = std::make_shared<std::atomic<std::size_t>>(0);
  executor x({}, {counting("a", a, 0, bytes{1}), counting("b", b, 0, bytes{1})},
             {{"d0", bytes{2}, 0b11}, {"d1", bytes{2}, 0b11}}, {.cpu_workers = 1, .queue_capacity = 4});
  const auto r = x.run(2000, plain);
  CHECK(r.samples == 2000);
  CHECK(r.runs[0][0] + r.runs[1][0] == 2000);
  CHECK(r.runs[0][1] + r.runs[1][1] == 2000);
}

TEST_CASE("the kernels: clips decode, pool and score, the filter keeps the share its hash gives", "[pipeline]") {
  const auto source = pipeline::encoded_clip_source(4096, 4);
  auto s = source(5);
  CHECK(s.id == 5);
  CHECK(s.payload == source(1).payload);  // 5 % 4 == 1: the same clip
  CHECK(s.payload != source(2).payload);
  pipeline::decode_operator().run(s);
  REQUIRE(s.features.size() == 4096);
  pipeline::split_operator(64).run(s);
  REQUIRE(s.features.size() == 64);
  // The pooled value is the mean of its run of the decoded clip (within int8's error of the source values).
  auto t = source(5);
  pipeline::decode_operator().run(t);
  double mean = 0;
  for (std::size_t i = 0; i < 64; ++i) mean += t.features[i];
  CHECK(s.features[0] == Approx(mean / 64 + 1e-3).margin(1e-5));

  const auto m = pipeline::index_model("aesthetic", 256, 64, 3, 0.6);
  CHECK(m.footprint == pipeline::index_model_footprint(256, 64));
  CHECK(m.footprint == bytes{256 * 64 * 4 + 256 * 8});
  auto copy = m.load();
  CHECK(copy->memory() == m.footprint);
  // Three passes: the score is the sum of three best similarities, each at most |q|·max|key| > 0.
  pipeline::sample one = s;
  one.score = 0;
  (void)copy->run(one);
  CHECK(one.score > 0);
  std::size_t kept = 0;
  for (std::uint64_t id = 0; id < 4000; ++id) {
    auto x = s;
    x.id = id;
    kept += copy->run(x);
  }
  CHECK(kept == Approx(0.6 * 4000).margin(4 * std::sqrt(4000 * 0.6 * 0.4)));
  // The same id passes the same way on another copy (every device filters alike).
  auto again = m.load();
  for (std::uint64_t id = 0; id < 100; ++id) {
    auto x = s, y = s;
    x.id = y.id = id;
    CHECK(copy->run(x) == again->run(y));
  }
}

}  // namespace pipeline_executor_test
