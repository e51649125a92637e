// comm::all_to_all over something that is not a Communicator: the diagnostic ladder's message and its fix,
// not "the required type 'typename C::communicator_concept' is invalid".
// expect: this type is not a Communicator. Fix: add `using communicator_concept
#include <trinity/comm/all_to_all.hpp>
#include <trinity/comm/thread_world.hpp>

#include <span>
#include <vector>

struct not_a_communicator {};

// Positive control: the in-process backend is one.
static_assert(trinity::Communicator<trinity::comm::thread_communicator>, "positive control failed");

void exchange(not_a_communicator& c, const std::vector<float>& in, std::vector<float>& out) {
  trinity::comm::all_to_all(c, std::span<const float>(in), std::span<float>(out));
}
