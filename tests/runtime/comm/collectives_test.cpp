// The correctness matrix nccl-tests runs, on the in-process backend: every
// rank count from 1 to 8, sizes 0, 1, primes and powers of two, in place and
// out of place, sum/max/min, int32 bit-exact against a serial reduction in the
// ring's own order, fp32 against a double-precision reference, and the same
// bits on every run. The MPI backend runs the same matrix in tests/mpi.
#include <catch2/catch.hpp>

#include <trinity/comm.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <latch>
#include <limits>
#include <thread>
#include <vector>

namespace comm_collectives_test {

using namespace trinity;
using comm::reduce_op;

namespace {

// Deterministic inputs: rank r, element i. Large enough magnitudes that int32 sums wrap.
template <class T>
T input(int rank, std::size_t i) {
  const std::uint64_t h = (static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull ^ (i * 0xBF58476D1CE4E5B9ull);
  const std::uint64_t m = (h ^ (h >> 31)) * 0x94D049BB133111EBull;
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<std::uint32_t>(m >> 32));
  } else {
    return static_cast<T>(static_cast<double>(static_cast<std::int64_t>(m >> 11) - (std::int64_t{1} << 52)) /
                          static_cast<double>(std::int64_t{1} << 52));
  }
}

std::int32_t int_reference(int ranks, std::size_t i, reduce_op op) {
  std::uint32_t sum = 0;
  std::int32_t hi = std::numeric_limits<std::int32_t>::min(), lo = std::numeric_limits<std::int32_t>::max();
  for (int r = 0; r < ranks; ++r) {
    const auto v = input<std::int32_t>(r, i);
    sum += static_cast<std::uint32_t>(v);
    hi = std::max(hi, v);
    lo = std::min(lo, v);
  }
  return op == reduce_op::sum ? static_cast<std::int32_t>(sum) : op == reduce_op::max ? hi : lo;
}

double float_reference(int ranks, std::size_t i, reduce_op op) {
  double sum = 0, hi = -INFINITY, lo = INFINITY;
  for (int r = 0; r < ranks; ++r) {
    const double v = input<float>(r, i);
    sum += v;
    hi = std::max(hi, v);
    lo = std::min(lo, v);
  }
  return op == reduce_op::sum ? sum : op == reduce_op::max ? hi : lo;
}

// Runs one all-reduce on every rank; returns each rank's result.
template <class T>
std::vector<std::vector<T>> run_all_reduce(int ranks, std::size_t count, reduce_op op, comm::algorithm how,
                                           bool in_place) {
  comm::thread_world world(ranks, std::chrono::seconds(30));
  std::vector<std::vector<T>> out(static_cast<std::size_t>(ranks));
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    std::vector<T> in(count);
    for (std::size_t i = 0; i < count; ++i) in[i] = input<T>(c.rank(), i);
    auto& result = out[static_cast<std::size_t>(c.rank())];
    if (in_place) {
      comm::all_reduce(c, std::span<T>(in), op, how);
      result = std::move(in);
    } else {
      result.assign(count, T{});
      const std::vector<T> before = in;
      comm::all_reduce(c, std::span<const T>(in), std::span<T>(result), op, how);
      if (in != before) throw std::logic_error("out-of-place all_reduce changed its input");
    }
  });
  return out;
}

// memcmp that accepts empty ranges (memcmp itself must not see a null pointer, even for 0 bytes).
bool same_bytes(const void* a, const void* b, std::size_t n) { return n == 0 || std::memcmp(a, b, n) == 0; }

const std::vector<std::size_t> sizes{0, 1, 2, 3, 7, 31, 257, 1021, 4099, 256, 1024, 65536};

}  // namespace

TEST_CASE("all-reduce of int32 is bit-exact on 1 to 8 ranks, every size, in and out of place, sum max min",
          "[comm][threads]") {
  for (const auto how : {comm::algorithm::ring, comm::algorithm::halving_doubling})
    for (int ranks = 1; ranks <= 8; ++ranks)
      for (const std::size_t count : sizes)
        for (const auto op : {reduce_op::sum, reduce_op::max, reduce_op::min})
          for (const bool in_place : {true, false}) {
            INFO("ranks " << ranks << ", count " << count << ", op " << to_string(op) << ", algorithm "
                          << static_cast<int>(how) << (in_place ? ", in place" : ", out of place"));
            const auto out = run_all_reduce<std::int32_t>(ranks, count, op, how, in_place);
            std::size_t wrong = 0;
            for (const auto& rank_out : out)
              for (std::size_t i = 0; i < count; ++i) wrong += rank_out[i] != int_reference(ranks, i, op);
            REQUIRE(wrong == 0);
          }
}

TEST_CASE("all-reduce of fp32 matches a double-precision reference and gives every rank the same bits",
          "[comm][threads]") {
  for (const auto how : {comm::algorithm::ring, comm::algorithm::halving_doubling})
    for (int ranks = 1; ranks <= 8; ++ranks)
      for (const std::size_t count : sizes)
        for (const auto op : {reduce_op::sum, reduce_op::max, reduce_op::min}) {
          INFO("ranks " << ranks << ", count " << count << ", op " << to_string(op));
          const auto out = run_all_reduce<float>(ranks, count, op, how, true);
          double worst = 0;
          for (std::size_t i = 0; i < count; ++i) {
            const double ref = float_reference(ranks, i, op);
            // n − 1 fp32 additions of |x| ≤ 1: each rounds by at most 2^-24 of a partial sum ≤ n.
            worst = std::max(worst, std::abs(out[0][i] - ref));
          }
          CHECK(worst <= (op == reduce_op::sum ? ranks * ranks * 0x1p-24 : 0.0));
          for (const auto& rank_out : out) REQUIRE(same_bytes(rank_out.data(), out[0].data(), count * sizeof(float)));
        }
}

TEST_CASE("all-reduce gives the same bits on every run", "[comm][threads]") {
  for (int ranks : {3, 5, 8}) {
    const auto a = run_all_reduce<float>(ranks, 100'003, reduce_op::sum, comm::algorithm::ring, true);
    const auto b = run_all_reduce<float>(ranks, 100'003, reduce_op::sum, comm::algorithm::ring, true);
    REQUIRE(same_bytes(a[0].data(), b[0].data(), a[0].size() * sizeof(float)));
    const auto c = run_all_reduce<float>(ranks, 1'001, reduce_op::sum, comm::algorithm::halving_doubling, true);
    const auto d = run_all_reduce<float>(ranks, 1'001, reduce_op::sum, comm::algorithm::halving_doubling, true);
    REQUIRE(same_bytes(c[0].data(), d[0].data(), c[0].size() * sizeof(float)));
  }
}

TEST_CASE("the ring all-reduce adds each chunk along the ring, starting after its owner", "[comm][threads]") {
  // A wrong order would still be close; only the exact fp32 order gives these bits.
  const int ranks = 4;
  const std::size_t count = 4099;
  const auto out = run_all_reduce<float>(ranks, count, reduce_op::sum, comm::algorithm::ring, true);
  const comm::partition part(count, ranks);
  for (int chunk = 0; chunk < ranks; ++chunk)
    for (std::size_t i = part.begin(chunk); i < part.end(chunk); ++i) {
      float acc = input<float>((chunk + 1) % ranks, i);
      for (int k = 2; k <= ranks; ++k) acc = acc + input<float>((chunk + k) % ranks, i);
      REQUIRE(out[0][i] == acc);
    }
}

TEST_CASE("reduce-scatter leaves rank r holding chunk r of the partition, the same bits the all-reduce gives",
          "[comm][threads]") {
  for (int ranks = 1; ranks <= 8; ++ranks)
    for (const std::size_t count : {std::size_t{0}, std::size_t{5}, std::size_t{1021}}) {
      const comm::partition part(count, ranks);
      const auto full = run_all_reduce<float>(ranks, count, reduce_op::sum, comm::algorithm::ring, true);
      comm::thread_world world(ranks);
      std::vector<std::vector<float>> shards(static_cast<std::size_t>(ranks));
      comm::run_ranks(world, [&](comm::thread_communicator& c) {
        std::vector<float> in(count);
        for (std::size_t i = 0; i < count; ++i) in[i] = input<float>(c.rank(), i);
        auto& mine = shards[static_cast<std::size_t>(c.rank())];
        mine.resize(part.size(c.rank()));
        comm::reduce_scatter(c, std::span<const float>(in), std::span<float>(mine), reduce_op::sum);
      });
      for (int r = 0; r < ranks; ++r)
        REQUIRE(same_bytes(shards[static_cast<std::size_t>(r)].data(), full[0].data() + part.begin(r),
                           part.size(r) * sizeof(float)));
    }
}

TEST_CASE("all-gather assembles every rank's chunk in rank order", "[comm][threads]") {
  for (int ranks = 1; ranks <= 8; ++ranks)
    for (const std::size_t count : {std::size_t{0}, std::size_t{3}, std::size_t{4099}}) {
      const comm::partition part(count, ranks);
      comm::thread_world world(ranks);
      std::vector<int> wrong(static_cast<std::size_t>(ranks));
      comm::run_ranks(world, [&](comm::thread_communicator& c) {
        std::vector<std::int32_t> mine(part.size(c.rank())), all(count, -1);
        for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = static_cast<std::int32_t>(part.begin(c.rank()) + k);
        comm::all_gather(c, std::span<const std::int32_t>(mine), std::span<std::int32_t>(all));
        for (std::size_t i = 0; i < count; ++i)
          wrong[static_cast<std::size_t>(c.rank())] += all[i] != static_cast<int>(i);
      });
      REQUIRE(std::count(wrong.begin(), wrong.end(), 0) == ranks);
    }
}

TEST_CASE("broadcast delivers the root's bytes to every rank, by tree and by pipelined chain", "[comm][threads]") {
  for (int ranks = 1; ranks <= 8; ++ranks)
    for (const std::size_t count : {std::size_t{0}, std::size_t{13}, std::size_t{3 << 20}})
      for (int root : {0, ranks - 1, ranks / 2}) {
        comm::thread_world world(ranks);
        std::vector<int> wrong(static_cast<std::size_t>(ranks));
        comm::run_ranks(world, [&](comm::thread_communicator& c) {
          std::vector<std::byte> buf(count, std::byte{0});
          if (c.rank() == root)
            for (std::size_t i = 0; i < count; ++i) buf[i] = static_cast<std::byte>(i * 7 + 1);
          comm::broadcast(c, std::span<std::byte>(buf), root);
          for (std::size_t i = 0; i < count; ++i)
            wrong[static_cast<std::size_t>(c.rank())] += buf[i] != static_cast<std::byte>(i * 7 + 1);
        });
        INFO("ranks " << ranks << ", bytes " << count << ", root " << root);
        REQUIRE(std::count(wrong.begin(), wrong.end(), 0) == ranks);
      }
}

TEST_CASE("a 256 MiB all-reduce is exact on 2 ranks", "[comm][threads][large]") {
  const std::size_t count = (std::size_t{256} << 20) / sizeof(std::int32_t);
  const auto out = run_all_reduce<std::int32_t>(2, count, reduce_op::sum, comm::algorithm::automatic, true);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; i += 4099) wrong += out[1][i] != int_reference(2, i, reduce_op::sum);
  for (std::size_t i = count - 1000; i < count; ++i) wrong += out[0][i] != int_reference(2, i, reduce_op::sum);
  REQUIRE(wrong == 0);
  REQUIRE(same_bytes(out[0].data(), out[1].data(), count * sizeof(std::int32_t)));
}

TEST_CASE("a collective whose peer never arrives ends with a timeout that names both ranks", "[comm][threads]") {
  // Ranks 0 and 1 both start before either calls the all-reduce, so on a loaded machine (or under a
  // sanitizer) the one that times out finds the other already waiting, and the chain reaches rank 2.
  comm::thread_world world(3, std::chrono::milliseconds(2000));
  std::latch both_started(2);
  const auto started = std::chrono::steady_clock::now();
  try {
    comm::run_ranks(world, [&](comm::thread_communicator& c) {
      std::vector<float> g(1000, 1.0f);
      if (c.rank() == 2) return;  // rank 2 never comes
      both_started.arrive_and_wait();
      comm::all_reduce(c, std::span<float>(g), reduce_op::sum);
    });
    FAIL("run_ranks returned although rank 2 never joined the all-reduce");
  } catch (const comm::timeout_error& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("all_reduce") && Catch::Contains("rank 2") && Catch::Contains("never"));
  }
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
  CHECK(world.broken());
}

TEST_CASE("ranks that disagree on the count fail with an error naming it, not a hang", "[comm][threads]") {
  comm::thread_world world(2, std::chrono::seconds(10));
  REQUIRE_THROWS_WITH(comm::run_ranks(world,
                                      [](comm::thread_communicator& c) {
                                        std::vector<float> g(c.rank() == 0 ? 100 : 101, 1.0f);
                                        comm::all_reduce(c, std::span<float>(g), reduce_op::sum, comm::algorithm::ring);
                                      }),
                      Catch::Contains("count") && Catch::Contains("same count"));
}

TEST_CASE("a message whose sender failed is taken back, never read after its buffer is gone", "[comm][threads]") {
  // Rank 0 posts 64 bytes to rank 1, then fails on what rank 2 sends it. Rank 1 asks for the message only
  // after rank 0 has unwound and freed it: it must find nothing to copy (ASan would see a use after free).
  comm::thread_world world(3, std::chrono::seconds(10));
  std::atomic<bool> rank0_gone{false};
  std::atomic<bool> rank1_copied{false};
  REQUIRE_THROWS_WITH(comm::run_ranks(world,
                                      [&](comm::thread_communicator& c) {
                                        if (c.rank() == 0) {
                                          try {
                                            std::vector<std::byte> out(64, std::byte{7});
                                            std::vector<std::byte> in(32);
                                            c.sendrecv(out, 1, in, 2);
                                          } catch (...) {
                                            rank0_gone = true;
                                            throw;
                                          }
                                        } else if (c.rank() == 2) {
                                          std::vector<std::byte> out(16);
                                          c.send(out, 0);
                                        } else {
                                          while (!rank0_gone) std::this_thread::yield();
                                          std::vector<std::byte> in(64);
                                          c.recv(in, 0);
                                          rank1_copied = true;
                                        }
                                      }),
                      Catch::Contains("count") && Catch::Contains("same count"));
  CHECK_FALSE(rank1_copied);
}

TEST_CASE("barrier returns on every rank only after all arrive", "[comm][threads]") {
  for (int ranks = 1; ranks <= 8; ++ranks) {
    comm::thread_world world(ranks);
    std::atomic<int> arrived{0};
    std::vector<int> seen(static_cast<std::size_t>(ranks));
    comm::run_ranks(world, [&](comm::thread_communicator& c) {
      arrived.fetch_add(1);
      comm::barrier(c);
      seen[static_cast<std::size_t>(c.rank())] = arrived.load();
    });
    REQUIRE(std::count(seen.begin(), seen.end(), ranks) == ranks);
  }
}

TEST_CASE("a ring all-reduce sends 2(n-1)/n of the buffer per rank", "[comm][threads]") {
  for (int ranks = 2; ranks <= 8; ++ranks) {
    const std::size_t count = 840 * 8;  // divisible by 1..8
    comm::thread_world world(ranks);
    std::vector<std::uint64_t> sent(static_cast<std::size_t>(ranks));
    comm::run_ranks(world, [&](comm::thread_communicator& c) {
      std::vector<float> g(count, 1.0f);
      comm::all_reduce(c, std::span<float>(g), reduce_op::sum, comm::algorithm::ring);
      sent[static_cast<std::size_t>(c.rank())] = c.bytes_sent();
    });
    for (auto s : sent)
      REQUIRE(s == 2 * static_cast<std::size_t>(ranks - 1) * count * sizeof(float) / static_cast<std::size_t>(ranks));
  }
}

}  // namespace comm_collectives_test
