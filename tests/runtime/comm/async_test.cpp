// Collectives on a progress engine: the bits of the same collectives run in
// turn, started in order and finished in order, errors rethrown at wait(), and
// the caller really goes on while the collective runs (a collective that waits
// for the caller would time out if start() ran it in place).
#include <catch2/catch.hpp>

#include <trinity/comm.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "forwarding_communicator.hpp"

namespace comm_async_test {

using namespace trinity;

namespace {

std::vector<float> inputs(int rank, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>((i * 7919 + static_cast<std::size_t>(rank) * 104729) % 1009) * 0.013f - 6.5f;
  return v;
}

// A communicator whose all-reduce holds until the caller says it has gone on, or gives up after 10 s.
struct waits_for_caller : test::forwarding_communicator {
  static constexpr std::string_view name = "waits-for-caller";
  std::atomic<bool>* caller_went_on;
  std::atomic<int>* timed_out;
  template <class T>
  void all_reduce(std::span<T> data, comm::reduce_op op) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!caller_went_on->load()) {
      if (std::chrono::steady_clock::now() > give_up) {
        timed_out->fetch_add(1);
        break;
      }
      std::this_thread::yield();
    }
    comm::ring::all_reduce(*this, data, op);
  }
};

// MPI below MPI_THREAD_SERIALIZED says so; the engine must refuse it.
struct single_threaded {
  using communicator_concept = communicator_tag;
  static constexpr std::string_view name = "single-threaded";
  [[nodiscard]] int rank() const { return 0; }
  [[nodiscard]] int size() const { return 1; }
  [[nodiscard]] std::uint64_t bytes_sent() const { return 0; }
  void send(std::span<const std::byte>, int) {}
  void recv(std::span<std::byte>, int) {}
  void sendrecv(std::span<const std::byte>, int, std::span<std::byte>, int) {}
  [[nodiscard]] bool serialized_threads() const { return false; }
};

}  // namespace

TEST_CASE("collectives on a progress engine give the bits of the same collectives run in turn", "[comm][async]") {
  for (int ranks : {1, 2, 3, 5}) {
    INFO(ranks << " ranks");
    const std::size_t n = 10'007;
    std::vector<std::vector<float>> sync(static_cast<std::size_t>(ranks)), async(sync);
    comm::thread_world world(ranks);
    comm::run_ranks(world, [&](comm::thread_communicator& c) {
      const auto r = static_cast<std::size_t>(c.rank());
      const comm::partition part(n, c.size());
      // In turn: all-reduce, reduce-scatter of the result, all-gather of the shard.
      auto a = inputs(c.rank(), n);
      comm::all_reduce(c, std::span<float>(a), comm::reduce_op::sum, comm::algorithm::ring);
      std::vector<float> shard(part.size(c.rank())), whole(n);
      comm::reduce_scatter(c, std::span<const float>(a), std::span<float>(shard), comm::reduce_op::sum,
                           comm::algorithm::ring);
      comm::all_gather(c, std::span<const float>(shard), std::span<float>(whole), comm::algorithm::ring);
      sync[r] = whole;
      // The same three, started back to back on the engine and waited on once, the last first.
      comm::progress_engine<comm::thread_communicator> engine(c);
      auto b = inputs(c.rank(), n);
      std::vector<float> shard2(part.size(c.rank())), whole2(n);
      const auto p1 = engine.all_reduce(std::span<float>(b), comm::reduce_op::sum, comm::algorithm::ring);
      const auto p2 = engine.reduce_scatter(std::span<const float>(b), std::span<float>(shard2), comm::reduce_op::sum,
                                            comm::algorithm::ring);
      const auto p3 =
          engine.all_gather(std::span<const float>(shard2), std::span<float>(whole2), comm::algorithm::ring);
      p3.wait();
      CHECK(p1.ready());  // run in the order started: the first finished before the last
      CHECK(p2.ready());
      async[r] = whole2;
    });
    for (std::size_t r = 0; r < sync.size(); ++r)
      REQUIRE(std::memcmp(sync[r].data(), async[r].data(), sync[r].size() * sizeof(float)) == 0);
  }
}

TEST_CASE("a started collective runs while its caller goes on", "[comm][async]") {
  comm::thread_world world(2);
  std::atomic<int> timed_out{0};
  std::vector<float> out(2);
  comm::run_ranks(world, [&](comm::thread_communicator& inner) {
    std::atomic<bool> went_on{false};
    waits_for_caller c{{&inner}, &went_on, &timed_out};
    comm::progress_engine<waits_for_caller> engine(c);
    std::vector<float> v{static_cast<float>(inner.rank() + 1)};
    const auto done = engine.all_reduce(std::span<float>(v), comm::reduce_op::sum);
    went_on = true;  // start() returned before the collective could finish: it waits for this
    done.wait();
    out[static_cast<std::size_t>(inner.rank())] = v[0];
  });
  CHECK(timed_out.load() == 0);
  CHECK(out == std::vector<float>{3.0f, 3.0f});
}

TEST_CASE("a progress engine rethrows a collective's error at wait and goes on serving", "[comm][async]") {
  comm::thread_world world(1);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    comm::progress_engine<comm::thread_communicator> engine(c);
    const auto bad = engine.start([](comm::thread_communicator&) { throw std::runtime_error("lost a peer"); });
    std::vector<int> v{4};
    const auto good = engine.all_reduce(std::span<int>(v), comm::reduce_op::sum);
    CHECK_THROWS_WITH(bad.wait(), "lost a peer");
    good.wait();
    CHECK(v[0] == 4);
    engine.drain();
    CHECK(comm::pending{}.ready());
  });
  single_threaded s;
  CHECK_THROWS_WITH(
      comm::progress_engine<single_threaded>(s),
      Catch::StartsWith("communicator: may not be called from a second thread") && Catch::Contains("Fix"));
}

TEST_CASE("a rank's thread and its progress engine send through two groups at once and every byte is counted",
          "[comm][async]") {
  // Ranks 0-3: the rank's own thread all-reduces over its pair {0,1} or {2,3} while its engine all-reduces over
  // {0,2} or {1,3}; no two groups share a pair, as group.hpp asks, so both run at once on one communicator.
  // Its byte count was a plain integer both threads added to (a data race ThreadSanitizer reports).
  const std::size_t n = 50'000;
  comm::thread_world world(4);
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    const int r = c.rank();
    comm::group<comm::thread_communicator> rows(c, r < 2 ? std::vector<int>{0, 1} : std::vector<int>{2, 3});
    comm::group<comm::thread_communicator> columns(c, r % 2 == 0 ? std::vector<int>{0, 2} : std::vector<int>{1, 3});
    comm::progress_engine<comm::group<comm::thread_communicator>> engine(columns);
    std::vector<float> a(n, 1.0f), b(n, 2.0f);
    for (int round = 0; round < 4; ++round) {
      const auto pending = engine.all_reduce(std::span<float>(b), comm::reduce_op::sum, comm::algorithm::ring);
      comm::all_reduce(rows, std::span<float>(a), comm::reduce_op::sum, comm::algorithm::ring);
      pending.wait();
    }
    CHECK(a[n - 1] == 16.0f);  // doubled four times
    CHECK(b[0] == 32.0f);
    CHECK(rows.bytes_sent() > 0);
    CHECK(columns.bytes_sent() > 0);
    CHECK(c.bytes_sent() == rows.bytes_sent() + columns.bytes_sent());
  });
}

}  // namespace comm_async_test
