// A pipeline with ZeRO-3 would gather every stage's weights again for every micro-batch: refused with the fix.
// expect: a pipeline with ZeRO-3 gathers every stage's weights again for every micro-batch. Fix: use shard::zero<1> or
// shard::zero<2>
#include <trinity/parallel/scheme.hpp>

using namespace trinity;

// Positive control: ZeRO-3 without a pipeline, and ZeRO-1 with one, compile.
static_assert(parallel::scheme<parallel::tensor_parallel<2>, parallel::pipeline<1>, parallel::context_parallel<1>,
                               shard::zero<3>>::model_parallel == 2,
              "positive control failed");
static_assert(parallel::scheme<parallel::tensor_parallel<2>, parallel::pipeline<4, 2>, parallel::context_parallel<1>,
                               shard::zero<1>>::model_parallel == 8,
              "positive control failed");

int main() {
  return static_cast<int>(parallel::scheme<parallel::tensor_parallel<1>, parallel::pipeline<4>,
                                           parallel::context_parallel<1>, shard::zero<3>>::model_parallel);
}
