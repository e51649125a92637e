// The simulated fabric runs the real collectives on real bytes while its
// clocks follow the α-β model, so the time it reports for a ring all-reduce
// is the textbook formula, and its results are the threads backend's bits.
#include <catch2/catch.hpp>

#include <trinity/backends/sim/communicator.hpp>
#include <trinity/comm.hpp>
#include <trinity/fabric/topology.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/model/collectives.hpp>
#include <trinity/units/literals.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

namespace backends_sim_communicator_test {

using namespace trinity;
using namespace trinity::literals;

namespace {

struct timed_result {
  std::vector<seconds> clocks;
  std::vector<std::vector<float>> data;
};

template <class Collective>
timed_result run_sim(int ranks, std::size_t count, sim::fabric_link link, Collective collective) {
  comm::thread_world world(ranks);
  timed_result out{std::vector<seconds>(static_cast<std::size_t>(ranks)),
                   std::vector<std::vector<float>>(static_cast<std::size_t>(ranks))};
  comm::run_ranks(world, [&](comm::thread_communicator& t) {
    sim::communicator c(world, t.rank(), link);
    std::vector<float> g(count);
    for (std::size_t i = 0; i < count; ++i)
      g[i] = static_cast<float>((i * 31 + static_cast<std::size_t>(t.rank()) * 17) % 101) * 0.25f;
    collective(c, g);
    out.clocks[static_cast<std::size_t>(t.rank())] = c.now();
    out.data[static_cast<std::size_t>(t.rank())] = std::move(g);
  });
  return out;
}

}  // namespace

TEST_CASE("the simulated ring all-reduce takes 2(n-1)·α + 2(n-1)/n·S/B, within 1%", "[comm][sim]") {
  const sim::fabric_link link{2_us, 25_GBps, {}};
  for (int ranks : {2, 3, 4, 5, 8})
    for (std::size_t count : {std::size_t{840}, std::size_t{1 << 20}, std::size_t{3'000'017}}) {
      const auto r = run_sim(ranks, count, link, [](sim::communicator& c, std::vector<float>& g) {
        comm::all_reduce(c, std::span<float>(g), comm::reduce_op::sum, comm::algorithm::ring);
      });
      const bytes size{static_cast<double>(count * sizeof(float))};
      const double predicted =
          model::ring_all_reduce_time(static_cast<std::size_t>(ranks), size, {link.latency, link.bandwidth, {}})
              .value();
      const double textbook = 2.0 * (ranks - 1) * 2e-6 + 2.0 * (ranks - 1) / ranks * size.value() / 25e9;
      REQUIRE(predicted == Approx(textbook).epsilon(1e-12));
      INFO("ranks " << ranks << ", count " << count);
      for (const auto& t : r.clocks) REQUIRE(t.value() == Approx(textbook).epsilon(0.01));
    }
}

TEST_CASE("the simulated fabric charges the reduction's compute at the reduce rate", "[comm][sim]") {
  const sim::fabric_link link{1_us, 50_GBps, 10_GBps};
  const int ranks = 4;
  const std::size_t count = 1 << 20;
  const auto r = run_sim(ranks, count, link, [](sim::communicator& c, std::vector<float>& g) {
    comm::all_reduce(c, std::span<float>(g), comm::reduce_op::sum, comm::algorithm::ring);
  });
  const bytes size{static_cast<double>(count * sizeof(float))};
  const double predicted =
      model::ring_all_reduce_time(ranks, size, {link.latency, link.bandwidth, link.reduce_rate}).value();
  CHECK(predicted == Approx(2.0 * 3 * 1e-6 + 1.5 * size.value() / 50e9 + 0.75 * size.value() / 10e9));
  for (const auto& t : r.clocks) REQUIRE(t.value() == Approx(predicted).epsilon(1e-9));
}

TEST_CASE("halving-doubling beats the ring on the simulated fabric for small messages on many ranks", "[comm][sim]") {
  const sim::fabric_link link = sim::port_of(links::infiniband_400g::descriptor);
  const int ranks = 8;
  const auto ring = run_sim(ranks, 256, link, [](sim::communicator& c, std::vector<float>& g) {
    comm::all_reduce(c, std::span<float>(g), comm::reduce_op::sum, comm::algorithm::ring);
  });
  const auto hd = run_sim(ranks, 256, link, [](sim::communicator& c, std::vector<float>& g) {
    comm::all_reduce(c, std::span<float>(g), comm::reduce_op::sum, comm::algorithm::halving_doubling);
  });
  const bytes size{256.0 * sizeof(float)};
  const model::collective_link ml{link.latency, link.bandwidth, {}};
  CHECK(hd.clocks[0].value() == Approx(model::halving_doubling_all_reduce_time(ranks, size, ml).value()).epsilon(0.01));
  CHECK(hd.clocks[0] < ring.clocks[0]);
  // Same inputs, same sum, to fp32 rounding.
  for (std::size_t i = 0; i < 256; ++i) REQUIRE(hd.data[0][i] == Approx(ring.data[0][i]).epsilon(1e-6));
  // At 64 MiB the ring wins or ties: it sends the same bytes in more, smaller steps.
  CHECK(model::ring_all_reduce_time(ranks, 64_MiB, ml) <=
        model::halving_doubling_all_reduce_time(ranks, 64_MiB, ml) * 1.01);
}

TEST_CASE("the simulated fabric gives the same bits as the threads backend", "[comm][sim]") {
  const sim::fabric_link link{1_us, 10_GBps, {}};
  const auto r = run_sim(5, 10'007, link, [](sim::communicator& c, std::vector<float>& g) {
    comm::all_reduce(c, std::span<float>(g), comm::reduce_op::sum, comm::algorithm::ring);
  });
  comm::thread_world world(5);
  std::vector<float> ref;
  comm::run_ranks(world, [&](comm::thread_communicator& c) {
    std::vector<float> g(10'007);
    for (std::size_t i = 0; i < g.size(); ++i)
      g[i] = static_cast<float>((i * 31 + static_cast<std::size_t>(c.rank()) * 17) % 101) * 0.25f;
    comm::all_reduce(c, std::span<float>(g), comm::reduce_op::sum, comm::algorithm::ring);
    if (c.rank() == 0) ref = g;
  });
  REQUIRE(std::memcmp(ref.data(), r.data[3].data(), ref.size() * sizeof(float)) == 0);
}

TEST_CASE("a simulated message costs α + bytes/B and a receiver waits for the sender's clock", "[comm][sim]") {
  const sim::fabric_link link{1_us, 1_GBps, {}};
  comm::thread_world world(2);
  std::vector<double> t(2);
  comm::run_ranks(world, [&](comm::thread_communicator& tc) {
    sim::communicator c(world, tc.rank(), link);
    std::vector<std::byte> buf(1000);
    if (c.rank() == 0) {
      c.advance(5_us);  // the sender is late
      c.send(std::span<const std::byte>(buf), 1);
    } else {
      c.recv(std::span<std::byte>(buf), 0);
    }
    t[static_cast<std::size_t>(c.rank())] = c.now().value();
  });
  CHECK(t[0] == Approx(5e-6 + 1e-6 + 1e-6));
  CHECK(t[1] == Approx(5e-6 + 1e-6 + 1e-6));
}

TEST_CASE("a simulated link refuses figures it cannot use, by name", "[comm][sim]") {
  comm::thread_world world(1);
  CHECK_THROWS_WITH(sim::communicator(world, 0, {1_us, bytes_per_second{}, {}}), Catch::Contains("bandwidth"));
  CHECK_THROWS_WITH(sim::communicator(world, 0, {seconds{-1.0}, 1_GBps, {}}), Catch::Contains("latency"));
}

TEST_CASE("a simulated communicator on a topology costs each message its route: two ranks behind a switch",
          "[comm][sim][fabric]") {
  // Three accelerators: a and b share a switch over NVLink 5 (x18), c hangs off the switch over a CXL x16 link.
  fabric::topology t;
  const auto a = t.add_accelerator("a"), b = t.add_accelerator("b"), c = t.add_accelerator("c");
  const auto sw = t.add_switch("sw", link_family::nvlink);
  t.connect(a, sw, links::nvlink5_x18::descriptor);
  t.connect(b, sw, links::nvlink5_x18::descriptor);
  t.connect(c, sw, links::cxl3_x16::descriptor);
  const auto time_on = [&](std::vector<std::uint32_t> places, std::size_t count) {
    comm::thread_world world(static_cast<int>(places.size()));
    std::vector<seconds> clocks(places.size());
    std::vector<std::vector<float>> data(places.size());
    comm::run_ranks(world, [&](comm::thread_communicator& th) {
      sim::communicator comm(world, th.rank(), t, places);
      std::vector<float> g(count, static_cast<float>(th.rank() + 1));
      comm::all_reduce(comm, std::span<float>(g), comm::reduce_op::sum, comm::algorithm::ring);
      clocks[static_cast<std::size_t>(th.rank())] = comm.now();
      data[static_cast<std::size_t>(th.rank())] = std::move(g);
    });
    for (const auto& d : data) REQUIRE(std::all_of(d.begin(), d.end(), [&](float x) { return x == 3.0f; }));
    return clocks;
  };
  const std::size_t count = 1 << 20;
  const bytes size{static_cast<double>(count * sizeof(float))};
  // Two ranks over the switch: the ring's formula with α the route's idle latency and B its narrowest link.
  const auto near = time_on({a, b}, count);
  const model::collective_link ab{t.idle_latency(a, b), t.bandwidth(t.route(a, b)), {}};
  CHECK(t.bandwidth(t.route(a, b)).value() == links::nvlink5_x18::descriptor.bandwidth.value());
  for (const auto& x : near) CHECK(x.value() == Approx(model::ring_all_reduce_time(2, size, ab).value()).epsilon(0.01));
  // Across the CXL link the narrower route sets the pace, by the same formula at its own α and B.
  const auto far = time_on({a, c}, count);
  const model::collective_link ac{t.idle_latency(a, c), t.bandwidth(t.route(a, c)), {}};
  CHECK(t.bandwidth(t.route(a, c)).value() == links::cxl3_x16::descriptor.bandwidth.value());
  for (const auto& x : far) CHECK(x.value() == Approx(model::ring_all_reduce_time(2, size, ac).value()).epsilon(0.01));
  CHECK(far[0].value() > near[0].value() * 2);
  // Places must be nodes of the topology, one per rank.
  comm::thread_world world(2);
  CHECK_THROWS_WITH(sim::communicator(world, 0, t, std::vector<std::uint32_t>{a}),
                    Catch::StartsWith("places: 1 nodes for 2 ranks"));
  CHECK_THROWS_WITH(sim::communicator(world, 0, t, std::vector<std::uint32_t>{a, 9}),
                    Catch::StartsWith("places: 9 is not a node"));
}

TEST_CASE("the simulated pairwise all-to-all takes (n-1)·α + (n-1)/n·S/B, within 1%", "[comm][sim][all_to_all]") {
  const sim::fabric_link link{2_us, 25_GBps, {}};
  for (int ranks : {2, 3, 5, 8})
    for (std::size_t per_rank : {std::size_t{1}, std::size_t{4096}, std::size_t{250'003}}) {
      const std::size_t count = per_rank * static_cast<std::size_t>(ranks);
      const auto r = run_sim(ranks, count, link, [](sim::communicator& c, std::vector<float>& g) {
        std::vector<float> out(g.size());
        comm::all_to_all(c, std::span<const float>(g), std::span<float>(out));
        g = std::move(out);
      });
      const bytes size{static_cast<double>(count * sizeof(float))};
      const double predicted =
          model::pairwise_all_to_all_time(static_cast<std::size_t>(ranks), size, {link.latency, link.bandwidth, {}})
              .value();
      const double textbook = (ranks - 1) * 2e-6 + (ranks - 1.0) / ranks * size.value() / 25e9;
      REQUIRE(predicted == Approx(textbook).epsilon(1e-12));
      INFO("ranks " << ranks << ", " << per_rank << " floats to each");
      for (const auto& t : r.clocks) REQUIRE(t.value() == Approx(textbook).epsilon(0.01));
    }
}

}  // namespace backends_sim_communicator_test
