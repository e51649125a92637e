// The communicator backends a runtime test runs one body on: ranks as threads, and the same threads on the
// simulated fabric (1 µs, 10 GB/s). MPI runs the same bodies under mpirun in tests/mpi.
#pragma once

#include <catch2/catch.hpp>

#include <trinity/backends/sim/communicator.hpp>
#include <trinity/comm/thread_world.hpp>
#include <trinity/units/literals.hpp>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <tuple>
#include <vector>

namespace test_backends {

struct threads_backend {
  template <class F>
  static void run(int ranks, F f) {
    trinity::comm::thread_world world(ranks, std::chrono::seconds(30));
    trinity::comm::run_ranks(world, [&](trinity::comm::thread_communicator& c) { f(c); });
  }
};

struct sim_backend {
  template <class F>
  static void run(int ranks, F f) {
    using namespace trinity::literals;
    trinity::comm::thread_world world(ranks, std::chrono::seconds(30));
    trinity::comm::run_ranks(world, [&](trinity::comm::thread_communicator& t) {
      trinity::sim::communicator c(world, t.rank(), {1_us, 10_GBps, {}});
      f(c);
    });
  }
};

using all = std::tuple<threads_backend, sim_backend>;

//! Runs a check on `ranks` ranks of Backend: `check(c)` returns what it found wrong on its rank; every rank's list.
template <class Backend, class Check>
std::vector<std::vector<std::string>> failures_on(int ranks, Check check) {
  std::vector<std::vector<std::string>> bad(static_cast<std::size_t>(ranks));
  Backend::run(ranks, [&](auto& c) { bad[static_cast<std::size_t>(c.rank())] = check(c); });
  return bad;
}

//! failures_on for each rank count in `counts`, each rank's list checked empty (named by count and rank).
template <class Backend, class Check>
void check_every_rank(std::initializer_list<int> counts, Check check) {
  for (const int n : counts) {
    const auto bad = failures_on<Backend>(n, check);
    for (std::size_t r = 0; r < bad.size(); ++r) {
      INFO(n << " ranks, rank " << r);
      CHECK(bad[r] == std::vector<std::string>{});
    }
  }
}

}  // namespace test_backends
