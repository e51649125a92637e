// A whole parallel::scheme handed to data_parallel: the message says to pass the scheme's shard, not to opt in.
// expect: this is a composition \(a parallel::scheme\), not a ShardScheme. Fix: pass its shard scheme
#include <trinity/comm/thread_world.hpp>
#include <trinity/parallel/scheme.hpp>
#include <trinity/shard/data_parallel.hpp>

using namespace trinity;
using my_scheme = parallel::scheme<parallel::tensor_parallel<2>, parallel::pipeline<1>, parallel::context_parallel<1>,
                                   shard::zero<1>>;

// Positive control: its shard is a ShardScheme, and data_parallel takes that.
static_assert(ShardScheme<my_scheme::shard>, "positive control failed");
static_assert(sizeof(shard::data_parallel<my_scheme::shard, comm::thread_communicator>) > 0, "positive control failed");

static_assert(sizeof(shard::data_parallel<my_scheme, comm::thread_communicator>) > 0);
