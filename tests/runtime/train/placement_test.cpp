// The reference trainer's placement (train/placement.hpp) and its config's rules (train/config.hpp): where the
// model chunks start (an even split, or stated counts), which layers and initial parameters a pipeline rank holds
// (every layer once over the ranks, each its tensor slice of the whole), the layout the config asks for, the rows of
// a micro-batch, and each refusal by the flag and the fix.
#include <catch2/catch.hpp>

#include <trinity/train/placement.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace train_placement_test {

using namespace trinity;

train::config pipelined(std::size_t pp, std::size_t vpp, std::size_t hidden_layers) {
  train::config cfg;
  cfg.pipeline = pp;
  cfg.virtual_stages = vpp;
  cfg.hidden_layers = hidden_layers;
  cfg.width = 8;
  cfg.inputs = 4;
  cfg.outputs = 2;
  cfg.micro_batches = pp;
  return cfg;
}

TEST_CASE("placement: chunks split the layers evenly, or as stated, each chunk on rank c mod pp", "[train]") {
  auto cfg = pipelined(2, 2, 7);  // 8 layers, 4 chunks
  CHECK(train::chunk_starts(cfg, 8) == std::vector<std::size_t>{0, 2, 4, 6, 8});
  cfg.chunk_layers = {1, 3, 3, 1};
  const auto starts = train::chunk_starts(cfg, 8);
  CHECK(starts == std::vector<std::size_t>{0, 1, 4, 7, 8});
  CHECK(train::chunk_holding(starts, 0) == 0);
  CHECK(train::chunk_holding(starts, 3) == 1);
  CHECK(train::chunk_holding(starts, 7) == 3);
  cfg.chunk_layers = {1, 3, 3};
  CHECK_THROWS_WITH(train::chunk_starts(cfg, 8), Catch::Contains("--chunk-layers"));
  cfg.chunk_layers.clear();
  CHECK_THROWS_WITH(train::chunk_starts(cfg, 6),
                    Catch::Contains("--pp: 4 model chunks (pp*vpp) do not divide the 6 layers"));
}

TEST_CASE("placement: the pipeline ranks hold every layer once, their initial parameters the whole model's",
          "[train]") {
  for (const std::size_t t : {std::size_t{1}, std::size_t{2}}) {
    auto cfg = pipelined(2, 2, 7);
    cfg.tensor = t;
    const auto shape = cfg.shape();
    const auto whole = train::initial_parameters(shape, cfg.seed + 1);
    std::vector<std::size_t> seen(shape.layers(), 0);
    std::size_t values = 0;
    for (std::size_t rank = 0; rank < 2; ++rank)
      for (int tr = 0; tr < static_cast<int>(t); ++tr) {
        const auto local = train::local_layers_of(cfg, shape, rank, tr);
        for (const auto l : local.ids) seen[l] += 1;
        values += local.psi;
        CHECK(local.initial.size() == local.psi);
        // Rank 0 holds chunks 0 and 2: layers 0, 1 and 4, 5.
        if (rank == 0) CHECK(local.ids == std::vector<std::size_t>{0, 1, 4, 5});
      }
    for (const auto n : seen) CHECK(n == t);
    // A row layer's bias is every tensor rank's; the rest once.
    std::size_t biases = 0;
    for (std::size_t l = 1; l < shape.layers(); l += 2) biases += shape.out(l);
    CHECK(values == whole.size() + (t - 1) * biases);
  }
}

TEST_CASE("placement: the layout the config asks for, and what it cannot run refused by flag", "[train]") {
  auto cfg = pipelined(2, 1, 3);
  cfg.tensor = 2;
  cfg.sequence_parallel = true;
  cfg.schedule = "gpipe";
  const auto l = train::pipelined_layout(cfg, cfg.shape(), 8, 1);
  CHECK(model::to_string(l) == "tp=2,pp=2,vpp=1,cp=1,dp=2,mbs=1,recompute=none,sp=on,zero=1,schedule=gpipe");
  CHECK_THROWS_WITH(train::pipelined_layout(cfg, cfg.shape(), 6, 1),
                    Catch::Contains("--tp: 4 ranks a replica (tp*pp*cp) do not divide the 6 ranks"));
  cfg.virtual_stages = 2;
  cfg.hidden_layers = 7;
  CHECK_THROWS_WITH(train::pipelined_layout(cfg, cfg.shape(), 8, 1),
                    Catch::Contains("--schedule: gpipe runs one chunk a stage"));
  cfg = pipelined(2, 1, 3);
  cfg.micro_batches = 3;
  CHECK_THROWS_WITH(train::micro_batch_rows(cfg, 8),
                    Catch::Contains("--micro-batches: 8 samples per replica do not split into 3"));
  cfg.micro_batches = 4;
  CHECK(train::micro_batch_rows(cfg, 8) == 2);
}

TEST_CASE("config: recomputation flags that cannot go together are refused, naming the flag", "[train]") {
  train::config cfg;
  cfg.recompute_attention = true;
  CHECK_THROWS_WITH(train::check_recompute(cfg, 4), Catch::Contains("--recompute-attention"));
  cfg = {};
  cfg.recompute_layers = 3;
  CHECK_THROWS_WITH(train::check_recompute(cfg, 4), Catch::Contains("--recompute-layers: 3 blocks recomputed"));
  cfg.recompute_layers = 1;
  CHECK_THROWS_WITH(train::check_recompute(cfg, 3), Catch::Contains("does not pair"));
  CHECK_NOTHROW(train::check_recompute(cfg, 4));
}

}  // namespace train_placement_test
