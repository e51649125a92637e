// parallel::moe_forward over a type that opts in but cannot move bytes: the ladder names the missing members.
// expect: a Communicator moves bytes. Fix: add `send\(std::span<const std::byte>, int dest\)`
#include <trinity/comm/thread_world.hpp>
#include <trinity/parallel.hpp>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

struct half_a_communicator {
  using communicator_concept = trinity::communicator_tag;
  static constexpr std::string_view name = "half";
  int rank() const { return 0; }
  int size() const { return 1; }
  std::uint64_t bytes_sent() const { return 0; }
};

// Positive control: the in-process backend is one.
static_assert(trinity::Communicator<trinity::comm::thread_communicator>, "positive control failed");

void layer(half_a_communicator& c, const trinity::parallel::moe_shape& s,
           std::span<const trinity::parallel::expert_weights> local, std::span<const float> x,
           const trinity::parallel::routing& r, std::span<float> y) {
  trinity::parallel::moe_forward(c, s, local, x, r, y);
}
