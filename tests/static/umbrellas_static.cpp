// The umbrella headers bring every mechanism of their folder: <trinity/parallel.hpp> (and so <trinity/trinity.hpp>)
// the mixture-of-experts layer and DeepEP's dispatch deduplicated by node, which it once left out.
#include <trinity/trinity.hpp>

static_assert(sizeof(trinity::parallel::moe_pass) > 0, "<trinity/trinity.hpp> brings parallel/expert_parallel.hpp");
static_assert(sizeof(trinity::parallel::node_pass) > 0, "<trinity/trinity.hpp> brings parallel/node_dispatch.hpp");
static_assert(sizeof(trinity::train::config) > 0,
              "<trinity/trinity.hpp> brings the trainer's component, <trinity/train.hpp>");
static_assert(sizeof(trinity::model::gpipe_schedule) > 0, "<trinity/trinity.hpp> brings the pipeline schedules");
