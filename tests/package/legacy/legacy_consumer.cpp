// Written against trinity 0.1's public names, every one removed or moved since (CHANGELOG.md): it must build with
// deprecation warnings only and behave as it did.
#include <trinity/cache/hnsw_index.hpp>
#include <trinity/compress/zstd.hpp>
#include <trinity/concepts/tier.hpp>
#include <trinity/io.hpp>
#include <trinity/links/presets.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/tiers/presets.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "expect.hpp"

int main() {
  using namespace trinity;
  // A system assembled from 0.1's tier_spec and link_spec, made from() presets.
  auto s = plan::presets::h100_infiniband();
  plan::tier_spec host = plan::from(tiers::host_ddr::descriptor);
  host.price_per_gb_hour = 0.001;
  s.tiers[1] = host;
  plan::link_spec ib = plan::from(links::infiniband_400g::descriptor);
  s.interconnect = ib;
  const auto file = io::read_workload(io::parse(R"({"name": "w", "parameters": 7e9, "layers": 32, "hidden": 4096,
                                                   "sequence": 4096})",
                                                "w.json"),
                                      s);
  cache::hnsw_index index(2);
  index.add(1, std::vector<float>{1.0f, 0.0f});
  const auto hits = index.search(std::vector<float>{1.0f, 0.1f}, 1);
  static_assert(Tier<tiers::host_ddr>, "a tier preset models Tier");
  // 0.1's layout check, a string: tp=3 does not divide 32 heads.
  model::training_job job;
  job.shape = {.layers = 4, .hidden = 4096, .ffn_hidden = 16384, .heads = 32, .kv_heads = 32, .vocabulary = 32000};
  job.sequence = 2048;
  job.global_batch = 8;
  model::parallel_layout three_way;
  three_way.tp = 3;
  const std::string why = model::layout_problem(job, three_way);
  compress::zstd<1> codec;
  (void)codec;
  std::printf("trinity 0.1's names against this install:\n");
  EXPECT(s.tiers[1].name == tiers::host_ddr::descriptor.name && s.tiers[1].price_per_gb_hour == 0.001,
         "plan::from() and tier_spec still build a tier");
  EXPECT(file.workload.type() == "training" && file.workload.name() == "w", "io::read_workload reads a workload");
  EXPECT(why == "tp: 3 does not divide the 32 heads", "model::layout_problem still says why as text");
  EXPECT(hits.size() == 1 && hits[0].id == 1, "<trinity/cache/hnsw_index.hpp> still brings the index");
  return consumer::verdict();
}
