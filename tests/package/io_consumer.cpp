// Built against an installed trinity::io by run.cmake: a system and a workload from JSON, planned; a
// misspelt key refused by path.
#include <trinity/io.hpp>
#include <trinity/workloads.hpp>
#include <trinity/plan.hpp>

#include <cstdio>

#include "expect.hpp"

int main() {
  using namespace trinity;
  const auto s = io::read_system(io::parse(R"({"name": "box",
      "device": {"compute": "989TFLOPs", "power": "700W", "idle_power": "90W", "count": 8, "gpu": true},
      "tiers": ["h100-hbm3", "host-ddr5"], "interconnect": "infiniband-400g"})",
                                           "box.json"));
  const auto w = workloads::read_workload(
      io::parse(R"({"name": "7b", "type": "training", "parameters": 6.7e9, "layers": 32, "hidden": 4096,
      "sequence": 4096, "batch": 1})",
                "7b.json"),
      s);
  const auto r = plan::plan_training(s, w.as<plan::training_workload>(), plan::default_codecs_for(s));
  bool refused = false;
  try {
    io::read_system(io::parse(R"({"name": "x", "devise": {}})", "x.json"));
  } catch (const invalid_input& e) {
    // The first problem leads; the keys it leaves missing follow in the same message.
    refused = std::string(e.what()).rfind("devise: unknown key; did you mean \"device\"?", 0) == 0;
  }
  std::printf("trinity::io from an install: %s\n", plan::describe(r, s).c_str());
  EXPECT(r.chosen().fits(), "a system and a workload read from JSON plan to a plan that fits");
  EXPECT(refused, "a misspelt key is refused by path with the nearest valid key");
  return consumer::verdict();
}
