// A progress engine over something that is not a Communicator: the diagnostic ladder's message and its fix.
// expect: this type is not a Communicator. Fix: add `using communicator_concept
#include <trinity/comm/async.hpp>
#include <trinity/comm/thread_world.hpp>

struct not_a_communicator {};

// Positive control: the in-process backend is one.
static_assert(trinity::Communicator<trinity::comm::thread_communicator>, "positive control failed");

static_assert(sizeof(trinity::comm::progress_engine<not_a_communicator>) > 0);
