// The correctness matrix of tests/runtime/comm, under mpirun: int32 bit-exact
// against MPI_Allreduce itself, fp32 against a double-precision reference, the
// same bits on every rank and every run, the shared-memory fast path and the
// generic algorithms over MPI point-to-point, and timeouts instead of hangs.
#include <catch2/catch.hpp>

#include <mpi.h>

#include <trinity/backends/mpi.hpp>
#include <trinity/comm.hpp>

#include "../runtime/comm/all_to_all_check.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

using namespace trinity;
using comm::reduce_op;

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

template <class T>
T input(int rank, std::size_t i) {
  const std::uint64_t h = (static_cast<std::uint64_t>(rank) + 1) * 0x9E3779B97F4A7C15ull ^ (i * 0xBF58476D1CE4E5B9ull);
  const std::uint64_t m = (h ^ (h >> 31)) * 0x94D049BB133111EBull;
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::uint32_t>(m >> 32));
  else
    return static_cast<T>(static_cast<double>(static_cast<std::int64_t>(m >> 11) - (std::int64_t{1} << 52)) /
                          static_cast<double>(std::int64_t{1} << 52));
}

template <class T>
std::vector<T> inputs(std::size_t count) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = input<T>(world_rank(), i);
  return v;
}

// True on every rank only if true on every rank.
bool everywhere(bool ok) {
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// The same bytes on every rank: rank 0's copy is broadcast and compared.
template <class T>
bool same_on_every_rank(const std::vector<T>& v) {
  std::vector<T> root = v;
  if (!root.empty()) MPI_Bcast(root.data(), static_cast<int>(root.size() * sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
  return everywhere(root.empty() || std::memcmp(root.data(), v.data(), v.size() * sizeof(T)) == 0);
}

const std::vector<std::size_t> sizes{
    0, 1, 2, 3, 7, 31, 257, 1021, 4099, 65537, std::size_t{1} << 18, std::size_t{1} << 20};
const std::vector<comm::algorithm> algorithms{comm::algorithm::automatic, comm::algorithm::ring,
                                              comm::algorithm::halving_doubling};

}  // namespace

TEST_CASE("mpi: all-reduce of int32 equals MPI_Allreduce bit for bit, every size, op and algorithm", "[mpi]") {
  mpi::communicator c;
  CHECK(c.shared_memory());  // mpirun on one machine: the fast path is on
  for (const auto how : algorithms)
    for (const std::size_t count : sizes)
      for (const auto op : {reduce_op::sum, reduce_op::max, reduce_op::min})
        for (const bool in_place : {true, false}) {
          INFO("count " << count << ", op " << to_string(op) << ", algorithm " << static_cast<int>(how)
                        << (in_place ? ", in place" : ", out of place"));
          const std::vector<std::int32_t> in = inputs<std::int32_t>(count);
          std::vector<std::int32_t> expected(count), got(count);
          MPI_Allreduce(in.data(), expected.data(), static_cast<int>(count), MPI_INT32_T, mpi::operation(op),
                        MPI_COMM_WORLD);
          if (in_place) {
            got = in;
            comm::all_reduce(c, std::span<std::int32_t>(got), op, how);
          } else {
            comm::all_reduce(c, std::span<const std::int32_t>(in), std::span<std::int32_t>(got), op, how);
          }
          REQUIRE(everywhere(got == expected));
        }
}

TEST_CASE("mpi: all-reduce of fp32 matches double precision and gives every rank the same bits", "[mpi]") {
  mpi::communicator c;
  const int n = world_size();
  for (const auto how : algorithms)
    for (const std::size_t count : sizes) {
      std::vector<float> got = inputs<float>(count);
      comm::all_reduce(c, std::span<float>(got), reduce_op::sum, how);
      double worst = 0;
      for (std::size_t i = 0; i < count; ++i) {
        double ref = 0;
        for (int r = 0; r < n; ++r) ref += input<float>(r, i);
        worst = std::max(worst, std::abs(got[i] - ref));
      }
      INFO("count " << count << ", algorithm " << static_cast<int>(how));
      REQUIRE(everywhere(worst <= n * n * 0x1p-24));
      REQUIRE(same_on_every_rank(got));
      std::vector<float> again = inputs<float>(count);
      comm::all_reduce(c, std::span<float>(again), reduce_op::sum, how);
      REQUIRE(everywhere(again == got));
    }
}

TEST_CASE("mpi: the shared-memory path adds in the ring's order, in whole blocks and in chunks alike", "[mpi]") {
  const int n = world_size();
  mpi::options small;  // every block reduced whole by every rank
  small.block_bytes = 64 << 10;
  small.small_block_bytes = 64 << 10;
  mpi::options chunked = small;  // every block cut into chunks, one per rank
  chunked.small_block_bytes = 0;
  mpi::communicator a(MPI_COMM_WORLD, small), b(MPI_COMM_WORLD, chunked);
  const std::size_t count = 3 * (64 << 10) / sizeof(float) + 12345;  // several blocks and a ragged end
  std::vector<float> x = inputs<float>(count), y = x;
  comm::all_reduce(a, std::span<float>(x), reduce_op::sum);
  comm::all_reduce(b, std::span<float>(y), reduce_op::sum);
  REQUIRE(everywhere(std::memcmp(x.data(), y.data(), count * sizeof(float)) == 0));
  // Element i of chunk c: x_{c+1} + x_{c+2} + ... + x_c, left to right.
  const comm::partition whole(count, n);
  bool exact = true;
  for (int c = 0; c < n; ++c)
    for (std::size_t i = whole.begin(c); i < whole.end(c); ++i) {
      float acc = input<float>((c + 1) % n, i);
      for (int k = 2; k <= n; ++k) acc = acc + input<float>((c + k) % n, i);
      exact = exact && x[i] == acc;
    }
  REQUIRE(everywhere(exact));
}

TEST_CASE("mpi: the shared-memory all-reduce, the ring all-reduce and the ring reduce-scatter agree bit for bit",
          "[mpi]") {
  // The case: at n = 3, 159,981 of 333,335 elements on rank 0 differed between the window and the ring.
  const int n = world_size(), r = world_rank();
  mpi::options messages;
  messages.shared_memory = false;
  mpi::communicator window, ring(MPI_COMM_WORLD, messages);
  for (const std::size_t count :
       {std::size_t{7}, std::size_t{1021}, std::size_t{3 * 333335}, std::size_t{(5u << 20) + 3}}) {
    INFO("count " << count);
    std::vector<float> a = inputs<float>(count), b = a;
    comm::all_reduce(window, std::span<float>(a), reduce_op::sum);
    comm::all_reduce(ring, std::span<float>(b), reduce_op::sum, comm::algorithm::ring);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < count; ++i) differ += std::memcmp(&a[i], &b[i], sizeof(float)) != 0;
    CHECK(everywhere(differ == 0));
    const comm::partition whole(count, n);
    const std::vector<float> in = inputs<float>(count);
    std::vector<float> mine(whole.size(r));
    comm::reduce_scatter(window, std::span<const float>(in), std::span<float>(mine), reduce_op::sum);
    CHECK(everywhere(std::memcmp(mine.data(), a.data() + whole.begin(r), mine.size() * sizeof(float)) == 0));
  }
}

TEST_CASE("mpi: reduce-scatter, all-gather and broadcast over MPI point-to-point", "[mpi]") {
  mpi::communicator c;
  const int n = world_size(), r = world_rank();
  for (const std::size_t count : {std::size_t{0}, std::size_t{5}, std::size_t{100'003}}) {
    const comm::partition part(count, n);
    const std::vector<std::int32_t> in = inputs<std::int32_t>(count);
    std::vector<std::int32_t> expected(count), shard(part.size(r));
    MPI_Allreduce(in.data(), expected.data(), static_cast<int>(count), MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    comm::reduce_scatter(c, std::span<const std::int32_t>(in), std::span<std::int32_t>(shard), reduce_op::sum);
    REQUIRE(everywhere(
        std::equal(shard.begin(), shard.end(), expected.begin() + static_cast<std::ptrdiff_t>(part.begin(r)))));
    std::vector<std::int32_t> all(count);
    comm::all_gather(c, std::span<const std::int32_t>(shard), std::span<std::int32_t>(all));
    REQUIRE(everywhere(all == expected));
    for (int root = 0; root < n; ++root) {
      std::vector<std::int32_t> b = r == root ? in : std::vector<std::int32_t>(count, 0);
      comm::broadcast(c, std::span<std::int32_t>(b), root);
      std::vector<std::int32_t> want = in;
      if (!want.empty()) MPI_Bcast(want.data(), static_cast<int>(count), MPI_INT32_T, root, MPI_COMM_WORLD);
      REQUIRE(everywhere(b == want));
    }
  }
}

TEST_CASE("mpi: a 256 MiB all-reduce is exact and identical on every rank", "[.][large]") {
  mpi::communicator c;
  const std::size_t count = (std::size_t{256} << 20) / sizeof(std::int32_t);
  const std::vector<std::int32_t> in = inputs<std::int32_t>(count);
  std::vector<std::int32_t> got = in, expected(count);
  comm::all_reduce(c, std::span<std::int32_t>(got), reduce_op::sum);
  MPI_Allreduce(in.data(), expected.data(), static_cast<int>(count), MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
  REQUIRE(everywhere(got == expected));
}

TEST_CASE("mpi: a collective whose peer never arrives ends with a timeout, on both paths", "[mpi]") {
  const int n = world_size(), r = world_rank(), absent = n - 1;
  for (const bool shared : {true, false}) {
    mpi::options o;
    o.timeout = std::chrono::milliseconds(300);
    o.shared_memory = shared;
    mpi::communicator c(MPI_COMM_WORLD, o);
    std::vector<float> g(100, 1.0f);  // small: the point-to-point sends are eager and need no receiver
    bool timed_out = false;
    std::string what;
    if (r != absent) {
      const auto t0 = std::chrono::steady_clock::now();
      try {
        comm::all_reduce(c, std::span<float>(g), reduce_op::sum,
                         shared ? comm::algorithm::automatic : comm::algorithm::ring);
      } catch (const comm::timeout_error& e) {
        timed_out = std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20);
        what = e.what();
      }
      INFO(what);
      CHECK(timed_out);
      CHECK_THAT(what, Catch::Contains("all_reduce") && Catch::Contains("never"));
      if (shared || r == 0) CHECK_THAT(what, Catch::Contains("rank " + std::to_string(absent)));
      // A failed communicator refuses further work rather than running out of step.
      CHECK_THROWS_AS(comm::all_reduce(c, std::span<float>(g), reduce_op::sum), comm::peer_failed);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

TEST_CASE("mpi: ranks that disagree on the count fail with an error naming it", "[mpi]") {
  mpi::communicator c;
  std::vector<float> g(world_rank() == 0 ? 1000 : 1001, 1.0f);
  CHECK_THROWS_WITH(comm::all_reduce(c, std::span<float>(g), reduce_op::sum),
                    Catch::Contains("count") && Catch::Contains("same count"));
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST_CASE("mpi: all_to_allv delivers every block and equals MPI_Alltoallv bit for bit", "[mpi]") {
  mpi::communicator c;
  REQUIRE(everywhere(a2a_check::run(c).empty()));
  const int n = world_size(), r = world_rank();
  const auto un = static_cast<std::size_t>(n);
  for (int pattern = 0; pattern < 3; ++pattern) {
    std::vector<int> sc(un), so(un), rc(un), ro(un);
    std::vector<std::size_t> usc(un), uso(un), urc(un), uro(un);
    int in_size = 0, out_size = 0;
    for (int j = 0; j < n; ++j) {
      const auto uj = static_cast<std::size_t>(j);
      sc[uj] = static_cast<int>(a2a_check::count(pattern, r, j));
      rc[uj] = static_cast<int>(a2a_check::count(pattern, j, r));
      so[uj] = in_size, in_size += sc[uj];
      ro[uj] = out_size, out_size += rc[uj];
      usc[uj] = static_cast<std::size_t>(sc[uj]), uso[uj] = static_cast<std::size_t>(so[uj]);
      urc[uj] = static_cast<std::size_t>(rc[uj]), uro[uj] = static_cast<std::size_t>(ro[uj]);
    }
    const auto in = inputs<std::int32_t>(static_cast<std::size_t>(in_size));
    std::vector<std::int32_t> expected(static_cast<std::size_t>(out_size)), got(expected.size());
    MPI_Alltoallv(in.data(), sc.data(), so.data(), MPI_INT32_T, expected.data(), rc.data(), ro.data(), MPI_INT32_T,
                  MPI_COMM_WORLD);
    comm::all_to_allv(c, std::span<const std::int32_t>(in), std::span<const std::size_t>(usc),
                      std::span<const std::size_t>(uso), std::span<std::int32_t>(got),
                      std::span<const std::size_t>(urc), std::span<const std::size_t>(uro));
    INFO("pattern " << pattern);
    REQUIRE(everywhere(got == expected));
  }
}
