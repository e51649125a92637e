// libFuzzer target: a workload file of any kind (workloads::read_workload) on hostile bytes (see fuzz_reader.hpp),
// against the DGX H100 preset, or the edge preset for an edge workload (it needs a server).
#include "fuzz_reader.hpp"

#include <trinity/workloads/registry.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace trinity;
  static const auto dgx = plan::presets::dgx_h100();
  static const auto edge = plan::presets::edge_5g_cloud();
  fuzz::accept_or_refuse([&] {
    const auto j = io::parse(fuzz::text_of(data, size), "fuzz.json");
    const bool edge_kind = j.is_object() && j.contains("type") && j["type"] == "edge";
    const auto w = workloads::read_workload(j, edge_kind ? edge : dgx);
    // A shape's parameter count is the shape's, whatever the file said.
    if (const auto* t = w.is<plan::training_workload>() ? &w.as<plan::training_workload>() : nullptr; t && t->shape)
      TRINITY_FUZZ_REQUIRE(t->parameters == model::parameters(*t->shape));
  });
  return 0;
}
