// The strict JSON readers: every object type refuses an unknown key by path with the nearest valid one,
// names a missing or mistyped field, and reads a good file into exactly the values it says.

#include <catch2/catch.hpp>

#include "hostile_text.hpp"

#include <trinity/io.hpp>
#include <trinity/workloads/registry.hpp>
#include <trinity/plan/parallel_cluster.hpp>
#include <trinity/plan/system.hpp>

#include <random>
#include <string>

namespace io_readers_test {

using namespace trinity;
using io::json;

namespace {

// The message a reader gives for `text`, or "" when it reads.
template <class Read>
std::string error_of(const std::string& text, Read read) {
  try {
    read(io::parse(text, "test.json"));
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "";
}

std::string system_error(const std::string& text) {
  return error_of(text, [](const json& j) { io::read_system(j); });
}
std::string workload_error(const std::string& text) {
  return error_of(text, [](const json& j) { workloads::read_workload(j, plan::presets::h100_infiniband()); });
}

const std::string good_system = R"({
  "name": "box",
  "device": {"name": "h100-sxm", "compute": {"bf16": "989TFLOPs", "fp32": "67TFLOPs"}, "power": "700W",
             "idle_power": "90W", "count": 8, "price_per_hour": 6.16, "gpu": true, "source": "data sheet"},
  "tiers": ["h100-hbm3", {"preset": "host-ddr5", "capacity": "256GB", "price_per_gb_hour": 0.01}],
  "interconnect": {"preset": "nvlink5-x18", "name": "nvlink4", "bandwidth": "450GB/s", "price_per_gb": 0},
  "server": {"name": "srv", "compute": "1PFLOPs", "power": "1kW"},
  "fabric": "nvl72-cxl"
})";

}  // namespace

TEST_CASE("a system file reads into exactly the values it gives, presets filling the rest", "[io]") {
  const auto s = io::read_system(io::parse(good_system, "box.json"));
  CHECK(s.name == "box");
  CHECK(s.device.name == "h100-sxm");
  CHECK(s.device.compute.value() == 989e12);
  CHECK(s.device.rate("fp32").value() == 67e12);
  CHECK(s.device.power.value() == 700);
  CHECK(s.device.idle_power.value() == 90);
  CHECK(s.device.count == 8);
  CHECK(s.device.price_per_hour == 6.16);
  CHECK(s.device.gpu);
  REQUIRE(s.tiers.size() == 2);
  CHECK(s.tiers[0].name == "h100-hbm3");
  CHECK(s.tiers[1].name == "host-ddr5");
  CHECK(s.tiers[1].capacity.value() == 256e9);
  CHECK(s.tiers[1].bandwidth == plan::tier_of(*find_tier("host-ddr5")).bandwidth);
  CHECK(s.tiers[1].price_per_gb_hour == 0.01);
  CHECK(s.interconnect.name == "nvlink4");
  CHECK(s.interconnect.bandwidth.value() == 450e9);
  CHECK(s.interconnect.latency == plan::link_of(*find_link("nvlink5-x18")).latency);
  REQUIRE(s.server);
  CHECK(s.server->compute.value() == 1e15);
  CHECK(s.fabric == "nvl72-cxl");
}

TEST_CASE("every object of a system refuses an unknown key by its path, with the nearest valid key", "[io]") {
  // The issue's own example: a typo in a tier override kept the preset's capacity and exited 0.
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "count": 1},
      "tiers": ["h100-hbm3", {"preset": "host-ddr5", "capacty": "256GB"}], "interconnect": "infiniband-400g"})") ==
        "tiers[1].capacty: unknown key; did you mean \"capacity\"?");
  CHECK(system_error(R"({"name": "x", "devices": {}, "tiers": [], "interconnect": "infiniband-400g"})") ==
        "devices: unknown key; did you mean \"device\"?");
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "powr": 700, "count": 1}, "tiers": ["h100-hbm3"],
      "interconnect": "infiniband-400g"})") == "device.powr: unknown key; did you mean \"power\"?");
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "count": 1}, "tiers": ["h100-hbm3"],
      "interconnect": {"preset": "infiniband-400g", "bandwith": "1GB/s"}})") ==
        "interconnect.bandwith: unknown key; did you mean \"bandwidth\"?");
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "count": 1}, "tiers": ["h100-hbm3"],
      "interconnect": "infiniband-400g", "server": {"compute": 1e15, "power": 700, "count": 2}})")
            .starts_with("server.count: unknown key"));
  CHECK(system_error(R"({"name": "x", "device": {"compute": {"bf61": 1e15}, "power": 700, "count": 1},
      "tiers": ["h100-hbm3"], "interconnect": "infiniband-400g"})") ==
        "device.compute.bf61: unknown precision; did you mean \"bf16\"?");
  // Far from every key: the valid ones are listed.
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "count": 1}, "tiers": ["h100-hbm3"],
      "interconnect": "rdma"})") == "interconnect: \"rdma\" is not a link preset; did you mean \"rdma-400g\"?");
  CHECK(
      system_error(R"({"name": "x", "zzzzzzzzzz": 1, "device": {}, "tiers": [], "interconnect": "infiniband-400g"})") ==
      "zzzzzzzzzz: unknown key; expected one of name, device, tiers, interconnect, server, fabric, fabric_memory_tier, "
      "scale_up_domain, scale_out");
}

TEST_CASE("a system names a missing, mistyped or out-of-range field", "[io]") {
  CHECK(system_error(R"({"name": "x", "tiers": ["h100-hbm3"], "interconnect": "infiniband-400g"})") ==
        "device: missing; a system needs it");
  CHECK(system_error(R"({"name": "x", "device": {"compute": "fast", "power": 700, "count": 1}, "tiers": ["h100-hbm3"],
      "interconnect": "infiniband-400g"})")
            .starts_with("device.compute: 'fast' is not a number with a unit"));
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "count": -1}, "tiers": ["h100-hbm3"],
      "interconnect": "infiniband-400g"})") ==
        "device.count: expected a whole number from 0 to 1000000, not the number -1");
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "count": 1, "gpu": "yes"},
      "tiers": ["h100-hbm3"], "interconnect": "infiniband-400g"})") ==
        "device.gpu: expected true or false, not the string \"yes\"");
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "count": 1}, "tiers": ["h100-hbn3"],
      "interconnect": "infiniband-400g"})") ==
        "tiers[0]: \"h100-hbn3\" is not a tier preset; did you mean \"h100-hbm3\"?");
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "count": 1}, "tiers": ["h100-hbm3",
      {"name": "t", "capacity": "-1GB", "bandwidth": "1GB/s"}], "interconnect": "infiniband-400g"})") ==
        "tiers[1].capacity: -1 GB must be positive and finite");
  CHECK(system_error(R"({"name": "x", "device": {"compute": 1e15, "power": 700, "idle_power": 800, "count": 1},
      "tiers": ["h100-hbm3"], "interconnect": "infiniband-400g"})")
            .starts_with("device.idle_power: 800 W is more than the power while computing (700 W)"));
  CHECK(system_error(R"([1, 2])") == "(top): expected a system (a JSON object), not an array");
}

TEST_CASE("JSON text with a key given twice, too deep, or broken is refused, never half read", "[io]") {
  CHECK(system_error(R"({"name": "x", "name": "y"})") == "name: given twice in one object; keep one");
  CHECK(system_error(R"({"name": "x", "tiers": [{"capacity": 1}, {"capacity": 1, "capacity": 2}]})") ==
        "tiers[1].capacity: given twice in one object; keep one");
  CHECK(system_error(std::string(100, '[') + std::string(100, ']')).ends_with("nested more than 64 levels deep"));
  CHECK(system_error(R"({"name": )").starts_with("test.json: is not JSON: "));
  CHECK(system_error("").starts_with("test.json: is not JSON: "));
  // A number no double holds: nlohmann reports it as out of range, not a parse error; still refused by name.
  CHECK(system_error("{\"name\": " + std::string(400, '9') + "}").starts_with("test.json: is not JSON: "));
}

TEST_CASE("a training workload refuses a misspelt key instead of training with the default", "[io]") {
  // The issue's example: "bacth" silently trained with batch 1.
  CHECK(
      workload_error(
          R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024, "sequence": 1024, "bacth": 2})") ==
      "bacth: unknown key; did you mean \"batch\"?");
  CHECK(
      workload_error(
          R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024, "sequence": 1024, "gpus": 3})")
          .starts_with("gpus: unknown key; expected one of name, type,"));
  CHECK(workload_error(
            R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024, "sequence": 1024,
      "precision": {"parameter": 2, "gradient": 2, "optimiser": 12}})") ==
        "precision.optimiser: unknown key; did you mean \"optimizer\"?");
  CHECK(workload_error(
            R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024, "sequence": 1024,
      "precision": "mixd"})") == "precision: \"mixd\" is not allowed; did you mean \"mixed\"?");
  CHECK(workload_error(R"({"name": "w", "type": "trainig"})") ==
        "type: \"trainig\" is not allowed; did you mean \"training\"?");
  CHECK(workload_error(
            R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024, "sequence": 1024,
      "data_parallel": 65})") == "data_parallel: 65 ranks exceed the system's 64 devices");
  const auto f = workloads::read_workload(
      io::parse(R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024,
      "sequence": 1024, "batch": 2, "precision": {"parameter": 2, "gradient": 2, "optimizer": 12, "compute": "fp8"}})",
                "w.json"),
      plan::presets::h100_infiniband());
  const auto& w = f.as<plan::training_workload>();
  CHECK(w.batch == 2);
  CHECK(w.compute_precision == "fp8");
  CHECK(w.precision.optimizer == 12);
  CHECK(f.type() == "training");
}

TEST_CASE("diffusion and edge workloads check their nested objects too", "[io]") {
  const std::string diffusion = R"({"name": "d", "type": "diffusion", "steps": 50, "step_flops": "98TFLOP",
      "reuse_depth": 10, "latent_size": "0.016GB", "hit_rate": {"family": "power-law", "kappa_per_gb": 0.1, "gamma": 0.7}})";
  CHECK(workload_error(diffusion).empty());
  CHECK(workload_error(R"({"name": "d", "type": "diffusion", "steps": 50, "step_flops": "98TFLOP", "reuse_depth": 10,
      "latent_size": "0.016GB", "hit_rate": {"kapa_per_gb": 0.1, "gamma": 0.7}})") ==
        "hit_rate.kapa_per_gb: unknown key; did you mean \"kappa_per_gb\"?");
  CHECK(workload_error(R"({"name": "d", "type": "diffusion", "steps": 50, "step_flops": "98TFLOP", "reuse_depth": 10,
      "latent_size": "0.016GB", "hit_rate": {"family": "exponential", "kappa_per_gb": 0.1, "gamma": 0.7}})")
            .starts_with("hit_rate.family: \"exponential\" is not allowed"));
  CHECK(workload_error(R"({"name": "d", "type": "diffusion", "steps": 50, "step_flops": "98TFLOP",
      "latent_size": "0.016GB", "trace": {"requests": "r.csv", "embedings": "e.fvecs"}})") ==
        "trace.embedings: unknown key; did you mean \"embeddings\"?");
  CHECK(workload_error(R"({"name": "d", "type": "diffusion", "steps": 50, "step_flops": "98TFLOP",
      "latent_size": "0.016GB", "hit_rate": {"kappa_per_gb": 0.1, "gamma": 0.7}})")
            .starts_with("reuse_depth: missing"));
  const auto traced = workloads::diffusion::read_file(io::parse(R"({"name": "d", "type": "diffusion", "steps": 50,
      "step_flops": "98TFLOP", "latent_size": "0.016GB", "trace": {"requests": "r.csv", "embeddings": "/abs/e.fvecs",
      "capacities": ["1GB", 2e9]}})",
                                                                "d.json"),
                                                      plan::presets::h100_infiniband(), "/data");
  REQUIRE(traced.trace);
  CHECK(traced.trace->requests == "/data/r.csv");
  CHECK(traced.trace->embeddings == "/abs/e.fvecs");
  CHECK(traced.trace->capacities == std::vector<bytes>{bytes{1e9}, bytes{2e9}});
  CHECK(traced.trace->measure_reuse_depth);

  const auto edge_system = plan::presets::edge_5g_cloud();
  const auto edge_error = [&](const std::string& text) {
    return error_of(text, [&](const json& j) { workloads::read_workload(j, edge_system); });
  };
  CHECK(edge_error(R"({"name": "e", "type": "edge", "frames_per_second": 10, "analysis_flops": "8GFLOP",
      "feature_size": "0.2MB", "encodings": [{"name": "h264", "bits_per_pixel": 0.1, "decode_flop": 1e9}]})") ==
        "encodings[0].decode_flop: unknown key; did you mean \"decode_flops\"?");
  CHECK(edge_error(R"({"name": "e", "type": "edge", "frames_per_second": 10, "analysis_flops": "8GFLOP",
      "feature_size": "0.2MB", "precison": "int8"})") == "precison: unknown key; did you mean \"precision\"?");
  CHECK(edge_error(R"({"name": "e", "type": "edge", "frames_per_second": 10, "analysis_flops": "8GFLOP",
      "feature_size": "0.2MB", "precision": "int9"})") == "precision: \"int9\" is not allowed; did you mean \"int8\"?");
}

TEST_CASE("an llm-serve workload reads a named model or its spelt-out shape, and nothing else", "[io][serving]") {
  const auto dgx = plan::presets::dgx_h100();
  const std::string rest = R"("prompt_tokens": 2000, "output_tokens": 300, "ttft_slo": "500ms", "tpot_slo": "30ms",
      "hit_rate": {"kappa_per_gb": 0.0028, "gamma": 0.127}, "hit_rate_bound": 0.37})";
  const auto read = [&](const std::string& head) {
    return workloads::read_workload(io::parse("{" + head + rest, "s.json"), dgx).as<plan::serving_workload>();
  };
  const auto named = read(R"("name": "a", "type": "llm-serve", "model": "llama3-8b", )");
  const auto spelt = read(R"("name": "b", "type": "llm-serve", "layers": 32, "hidden": 4096, "ffn_hidden": 14336,
      "heads": 32, "kv_heads": 8, "vocabulary": 128256, )");
  CHECK(model::parameters(named.shape) == 8'030'261'248.0);
  CHECK(model::parameters(spelt.shape) == model::parameters(named.shape));
  CHECK(spelt.ttft_slo.value() == Approx(0.5));
  CHECK(spelt.tpot_slo.value() == Approx(0.03));
  CHECK(spelt.hit_rate.kappa.value() == Approx(0.0028e-9));
  CHECK(spelt.hit_rate_bound == 0.37);
  const auto error = [&](const std::string& head) {
    return error_of("{" + head + rest, [&](const json& j) { workloads::read_workload(j, dgx); });
  };
  CHECK(error(R"("name": "c", "type": "llm-serve", "model": "llama3-80b", )")
            .starts_with("model: \"llama3-80b\" is not allowed; did you mean \"llama3-8b\"?"));  // one edit, as 70b
  CHECK(error(R"("name": "c", "type": "llm-serve", "layers": 32, "hidden": 4096, "ffn_hidden": 14336, "heads": 32,
      "kv_heads": 5, "vocabulary": 128256, )")
            .starts_with("kv_heads: must divide heads (32)"));
  CHECK(error(R"("name": "c", "type": "llm-serve", "model": "llama3-8b", "kv_head": 8, )") ==
        "kv_head: unknown key; did you mean \"kv_heads\"?");
  CHECK(error(R"("name": "c", "type": "llm-serve", "model": "llama3-8b", "gated_mlp": false, )")
            .starts_with("gated_mlp: is part of the named model's shape"));
  CHECK(error(R"("name": "c", "type": "llm-serve", )").starts_with("model: name a model"));
  CHECK(error(R"("name": "c", "type": "llm-serv", "model": "llama3-8b", )")
            .starts_with("type: \"llm-serv\" is not allowed; did you mean \"llm-serve\"?"));
}

TEST_CASE("a topology refuses an unknown key in itself, a node or a link", "[io]") {
  const auto topology_error = [](const std::string& text) {
    return error_of(text, [](const json& j) { io::read_topology(j); });
  };
  const std::string nodes = R"("nodes": [{"name": "h0", "kind": "host"}, {"name": "sw", "kind": "switch"},
      {"name": "m0", "kind": "memory", "capacity": "1TB"}])";
  CHECK(topology_error("{" + nodes + R"(, "links": [{"a": "h0", "b": "sw", "link": "cxl3-x16"},
      {"a": "sw", "b": "m0", "link": "cxl3-x16"}]})")
            .empty());
  CHECK(topology_error("{\"cxl_verison\": 3, " + nodes + R"(, "links": []})") ==
        "cxl_verison: unknown key; did you mean \"cxl_version\"?");
  CHECK(topology_error(R"({"nodes": [{"name": "h0", "kind": "host", "capacity": "1TB"}], "links": []})")
            .starts_with("nodes[0].capacity: unknown key"));
  CHECK(topology_error(R"({"nodes": [{"name": "m0", "kind": "memory", "capasity": "1TB"}], "links": []})") ==
        "nodes[0].capasity: unknown key; did you mean \"capacity\"?");
  CHECK(topology_error(R"({"nodes": [{"name": "h0", "kind": "hots"}], "links": []})") ==
        "nodes[0].kind: \"hots\" is not allowed; did you mean \"host\"?");
  CHECK(topology_error("{" + nodes + R"(, "links": [{"a": "h0", "b": "sw", "lnk": "cxl3-x16"}]})") ==
        "links[0].lnk: unknown key; did you mean \"link\"?");
  CHECK(topology_error("{" + nodes + R"(, "links": [{"a": "h0", "b": "sw", "link": "cxl3-x61"}]})") ==
        "links[0].link: \"cxl3-x61\" is not a link preset; did you mean \"cxl3-x16\"?");
  CHECK(topology_error(R"({"pbr": 1, "nodes": [], "links": []})") == "pbr: expected true or false, not the number 1");
}

TEST_CASE("a profile refuses an unknown key in itself, a compressor, the machine or its link", "[io]") {
  const auto profile_error = [](const std::string& text) {
    return error_of(text, [](const json& j) { io::read_profile(j); });
  };
  const std::string codec = R"({"name": "identity", "ratio": 1, "encode_rate_Bps": 1e10, "decode_rate_Bps": 1e10,
      "relative_error": 0, "lossless": true})";
  const std::string machine = R"("machine": {"dense_flops_per_second": 1e10, "cores": 2,
      "thread_link": {"latency_s": 1e-6, "bandwidth_Bps": 1e10}})";
  CHECK(profile_error("{\"compressors\": [" + codec + "], " + machine + "}").empty());
  CHECK(profile_error("{\"compresors\": []}") == "compresors: unknown key; did you mean \"compressors\"?");
  CHECK(profile_error(R"({"compressors": [{"name": "x", "ratio": 2, "encode_rate_bps": 1, "decode_rate_Bps": 1,
      "relative_error": 0}]})") == "compressors[0].encode_rate_bps: unknown key; did you mean \"encode_rate_Bps\"?");
  CHECK(profile_error(R"({"compressors": [], "machine": {"dense_flops_per_second": 1e10, "cores": 2,
      "thread_link": {"latency": 1e-6, "bandwidth_Bps": 1e10}}})") ==
        "machine.thread_link.latency: unknown key; did you mean \"latency_s\"?");
  CHECK(profile_error(R"({"compressors": [], "calibration": {"size": 1}})") ==
        "calibration.size: unknown key; did you mean \"size_bytes\"?");
  CHECK(profile_error(R"({"compressors": [{"name": "x", "ratio": -2, "encode_rate_Bps": 1, "decode_rate_Bps": 1,
      "relative_error": 0}]})") == "compressors[0].ratio: must be positive and finite");
  const auto p = io::read_profile(io::parse("{\"compressors\": [" + codec + "], " + machine + "}", "p.json"));
  REQUIRE(p.machine);
  CHECK(p.machine->cores == 2);
  CHECK(p.machine->latency.value() == 1e-6);
  CHECK(p.compressors.at(0).lossless);
}

TEST_CASE("hostile bytes give the readers an error to name, never a crash or another exception", "[io]") {
  // Mutations of valid files: flipped, dropped and duplicated bytes. Every outcome is a value or invalid_input.
  const std::string seeds[] = {
      good_system,
      R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024, "sequence": 1024})",
      R"({"nodes": [{"name": "m0", "kind": "memory", "capacity": "1TB"}], "links": []})"};
  std::mt19937 rng(7);
  int read = 0, refused = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::string text = test::mutated(seeds[static_cast<std::size_t>(round) % 3], rng, 1 + round % 4);
    try {
      const json j = io::parse(text, "m.json");
      io::read_system(j);
      ++read;
    } catch (const invalid_input&) {
      ++refused;
    }
    try {
      workloads::read_workload(io::parse(text, "m.json"), plan::presets::h100_infiniband());
    } catch (const invalid_input&) {
    }
    try {
      io::read_topology(io::parse(text, "m.json"));
    } catch (const invalid_input&) {
    }
  }
  CHECK(read + refused == 3000);
  CHECK(refused > 0);
}

TEST_CASE("a system's scale-out link, domain and GEMM curve are read, and what cannot work is refused by path",
          "[io]") {
  const auto s =
      io::read_system(nlohmann::json::parse(R"({"name": "c", "device": {"compute": "989TFLOPs", "power": "700W",
      "count": 16, "gemm": {"peak_fraction": 0.5, "half_size": 100}}, "tiers": ["h100-hbm3"],
      "interconnect": "nvlink5-x18", "scale_up_domain": 4, "scale_out": {"preset": "infiniband-400g", "bandwidth": "25GB/s"}})"));
  CHECK(s.scale_up_domain == 4);
  REQUIRE(s.scale_out.has_value());
  CHECK(s.scale_out->name == "infiniband-400g");
  CHECK(s.scale_out->bandwidth.value() == 25e9);
  CHECK(s.device.gemm.peak_fraction == 0.5);
  CHECK(s.device.gemm.half_size == 100);
  // The step model sees 4-GPU domains joined at 25 GB/s, and the GEMM curve.
  const auto c = plan::cluster_of(s, s.device.gemm, 1.0);
  CHECK(c.domain == 4);
  CHECK(c.slow.bandwidth.value() == 25e9);
  CHECK(c.gemm(100, 100, 100) == Approx(0.5 / 8));
  const auto refused = [](const char* text) {
    try {
      io::read_system(nlohmann::json::parse(text));
    } catch (const invalid_input& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused(R"({"name": "c", "device": {"compute": "1TFLOPs", "power": "1W", "count": 8}, "tiers": ["h100-hbm3"],
      "interconnect": "nvlink5-x18", "scale_up_domain": 4})")
            .find("scale_up_domain: domains need a link") == 0);
  CHECK(refused(R"({"name": "c", "device": {"compute": "1TFLOPs", "power": "1W", "count": 8}, "tiers": ["h100-hbm3"],
      "interconnect": "nvlink5-x18", "scale_up_domain": 16, "scale_out": "infiniband-400g"})")
            .find("scale_up_domain: 16 devices per domain, more than the 8") == 0);
  CHECK(refused(R"({"name": "c", "device": {"compute": "1TFLOPs", "power": "1W", "count": 8}, "tiers": ["h100-hbm3"],
      "interconnect": "nvlink5-x18", "scale_out": {"preset": "infiniband-400g", "bandwidth": "-1GB/s"}})")
            .find("scale_out.bandwidth") == 0);
  CHECK(
      refused(
          R"({"name": "c", "device": {"compute": "1TFLOPs", "power": "1W", "count": 8, "gemm": {"peak_fraction": 0.5}},
      "tiers": ["h100-hbm3"], "interconnect": "nvlink5-x18"})")
          .find("device.gemm.half_size") == 0);
  CHECK(refused(
            R"({"name": "c", "device": {"compute": "1TFLOPs", "power": "1W", "count": 8, "gemm": {"peak_fraction": 0.5,
      "half_size": 1, "knee": 2}}, "tiers": ["h100-hbm3"], "interconnect": "nvlink5-x18"})")
            .find("device.gemm.knee: unknown key") == 0);
  // A ceiling caps every shape; without one the curve climbs to its peak fraction, and the 1 is listed as assumed.
  const auto capped = io::read_system(nlohmann::json::parse(R"({"name": "c", "device": {"compute": "1TFLOPs",
      "power": "1W", "count": 8, "gemm": {"peak_fraction": 1, "half_size": 100, "ceiling": 0.7}}, "tiers": ["h100-hbm3"],
      "interconnect": "nvlink5-x18"})"));
  CHECK(capped.device.gemm(1e6, 1e6, 1e6) == 0.7);
  CHECK(capped.device.gemm(100, 100, 100) == Approx(1.0 / 8));
  CHECK_FALSE(plan::assumed(capped.assumed, "device.gemm.ceiling"));
  CHECK(plan::assumed(s.assumed, "device.gemm.ceiling"));
  CHECK(
      refused(R"({"name": "c", "device": {"compute": "1TFLOPs", "power": "1W", "count": 8, "gemm": {"peak_fraction": 1,
      "half_size": 1, "ceiling": 1.2}}, "tiers": ["h100-hbm3"], "interconnect": "nvlink5-x18"})")
          .find("device.gemm.ceiling: must lie in (0, 1]") == 0);
}

TEST_CASE(
    "a link reads what NCCL's collectives move over it, drops a preset's figure with its bandwidth, and "
    "refuses one past the line rate",
    "[io]") {
  const auto read = [](const char* link) {
    return io::read_system(nlohmann::json::parse(std::string(R"({"name": "c", "device": {"compute": "989TFLOPs",
      "power": "700W", "count": 16}, "tiers": ["h100-hbm3"], "scale_up_domain": 8, "scale_out": {"preset":
      "infiniband-400g", "collective_bandwidth": "45GB/s"}, "interconnect": )") +
                                                 link + "}"));
  };
  // The preset keeps NCCL's measured rate; the step model's fast level runs at it, the slow one at the 45 GB/s
  // the scale-out link names.
  const auto preset = read(R"("nvlink4-x18")");
  CHECK(preset.interconnect.bandwidth.value() == 450e9);
  CHECK(preset.interconnect.collective_bandwidth.value() == 370e9);
  const auto c = plan::cluster_of(preset, {}, 1.0);
  CHECK(c.fast.bandwidth.value() == 370e9);
  CHECK(c.slow.bandwidth.value() == 45e9);
  CHECK(preset.scale_out->bandwidth.value() == 50e9);
  // A link that names another bandwidth drops the preset's figure, measured on the preset's line: its
  // collectives run at the bandwidth it names, unless it names their rate too.
  const auto faster = read(R"({"preset": "nvlink4-x18", "bandwidth": "900GB/s"})");
  CHECK(faster.interconnect.collective_bandwidth.value() == 0);
  CHECK(faster.interconnect.collective_rate().value() == 900e9);
  CHECK(plan::cluster_of(faster, {}, 1.0).fast.bandwidth.value() == 900e9);
  const auto both = read(R"({"preset": "nvlink4-x18", "bandwidth": "900GB/s", "collective_bandwidth": "740GB/s"})");
  CHECK(both.interconnect.collective_rate().value() == 740e9);
  // A name or price leaves the preset's figure alone.
  CHECK(read(R"({"preset": "nvlink4-x18", "name": "nvl"})").interconnect.collective_rate().value() == 370e9);
  CHECK(read(R"({"name": "plain", "bandwidth": "100GB/s"})").interconnect.collective_rate().value() == 100e9);
  const auto refused = [&](const char* link) {
    try {
      read(link);
    } catch (const invalid_input& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused(R"({"preset": "nvlink4-x18", "collective_bandwidth": "500GB/s"})") ==
        "interconnect.collective_bandwidth: 500 GB/s is more than the bandwidth (450 GB/s): a collective cannot move "
        "more than the line carries; leave it out to take the bandwidth");
  CHECK(refused(R"({"preset": "nvlink4-x18", "collective_bandwidth": "-1GB/s"})")
            .find("interconnect.collective_bandwidth: ") == 0);
  CHECK(refused(R"({"preset": "nvlink4-x18", "colective_bandwidth": "300GB/s"})") ==
        "interconnect.colective_bandwidth: unknown key; did you mean \"collective_bandwidth\"?");
}

TEST_CASE("a spelt-out shape takes head_dim, a named model refuses it", "[io]") {
  const auto s = plan::presets::dgx_h100();
  const auto w = workloads::read_workload(io::parse(R"({"name": "q", "type": "training", "layers": 64,
      "hidden": 5120, "ffn_hidden": 25600, "heads": 64, "kv_heads": 8, "head_dim": 128, "vocabulary": 151936,
      "sequence": 4096})",
                                                    "q.json"),
                                          s)
                     .as<plan::training_workload>();
  CHECK(w.shape->head_size == 128);
  CHECK(w.parameters == Approx(model::parameters(*w.shape)));
  CHECK_THROWS_WITH(workloads::read_workload(io::parse(R"({"name": "q", "type": "training", "model": "llama3-8b",
      "head_dim": 64, "sequence": 4096})",
                                                       "q.json"),
                                             s),
                    Catch::Contains("head_dim: is part of the named model's shape"));
}

TEST_CASE("a published run's and a workload's shape read tied_embeddings, which a named model refuses", "[io]") {
  const auto runs_with = [](const std::string& extra) {
    return io::parse(R"({"sources": {"s": "a source"}, "runs": [{"name": "r", "source": "s", "role": "held-out",
        "system": "dgx-h100", "gpus": 8, "model": {"layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16,
        "kv_heads": 16, "vocabulary": 50304, "gated_mlp": false)" +
                         extra + R"(}, "sequence": 2048, "global_batch": 64,
        "parallelism": "tp=1,pp=1,cp=1,dp=8,mbs=1,recompute=none,sp=off", "published": {"iteration_s": 1.5}}]})",
                     "runs.json");
  };
  const auto untied = io::read_published_runs(runs_with("")).runs.at(0).job.shape;
  const auto tied = io::read_published_runs(runs_with(R"(, "tied_embeddings": true)")).runs.at(0).job.shape;
  CHECK_FALSE(untied.tied_embeddings);
  CHECK(tied.tied_embeddings);
  // The output layer's V·h weights are the only difference: 50,304 × 2,048.
  CHECK(model::parameters(untied) - model::parameters(tied) == Approx(50304.0 * 2048.0));
  // A training workload reads it beside a spelt-out shape, as does a serving workload; a named model fixes it, and
  // a workload without a shape has nothing to tie.
  const auto training = [](const std::string& extra) {
    return workloads::read_workload(
        io::parse(R"({"name": "q", "type": "training", "sequence": 2048, )" + extra + "}", "q.json"),
        plan::presets::dgx_h100());
  };
  const std::string shape = R"("layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16, "vocabulary": 50304)";
  const auto w = training(shape + R"(, "tied_embeddings": true)").as<plan::training_workload>();
  REQUIRE(w.shape);
  CHECK(w.shape->tied_embeddings);
  CHECK(model::parameters(*training(shape).as<plan::training_workload>().shape) - model::parameters(*w.shape) ==
        Approx(50304.0 * 2048.0));
  CHECK_THROWS_WITH(training(R"("model": "gpt3-175b", "tied_embeddings": false)"),
                    Catch::Contains("tied_embeddings: is part of the named model's shape"));
  CHECK_THROWS_WITH(training(R"("parameters": 1e9, "layers": 24, "hidden": 2048, "tied_embeddings": true)"),
                    Catch::Contains("tied_embeddings: describes a transformer's shape"));
  CHECK_THROWS_WITH(training(shape + R"(, "tied_embedding": true)"), Catch::Contains("tied_embedding: unknown key"));
  const auto serving = workloads::read_workload(
      io::parse(R"({"name": "s", "type": "llm-serve", )" + shape + R"(, "tied_embeddings": true,
          "prompt_tokens": 2000, "output_tokens": 300, "ttft_slo": "500ms", "tpot_slo": "30ms",
          "hit_rate": {"kappa_per_gb": 0.0028, "gamma": 0.127}})",
                "s.json"),
      plan::presets::dgx_h100());
  CHECK(serving.as<plan::serving_workload>().shape.tied_embeddings);
}

TEST_CASE("a published run's state_bytes replace mixed precision's 2, 2 and 12, and are refused by field", "[io]") {
  const auto runs_with = [](const std::string& extra) {
    return io::parse(R"({"sources": {"s": "a source"}, "runs": [{"name": "r", "source": "s", "role": "held-out",
        "system": "dgx-h100", "gpus": 8, "model": {"layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16,
        "kv_heads": 16, "vocabulary": 50304, "gated_mlp": false}, "sequence": 2048, "global_batch": 64,
        "parallelism": "tp=1,pp=1,cp=1,dp=8,mbs=1,recompute=none,sp=off", "zero": 1)" +
                         extra + R"(, "published": {"iteration_s": 1.5}}]})",
                     "runs.json");
  };
  const auto mixed = io::read_published_runs(runs_with("")).runs.at(0);
  const auto bf16 =
      io::read_published_runs(runs_with(R"(, "state_bytes": {"parameter": 2, "gradient": 2, "optimizer": 6})"))
          .runs.at(0);
  CHECK(mixed.job.precision.optimizer == 12);
  CHECK(bf16.job.precision.parameter == 2);
  CHECK(bf16.job.precision.gradient == 2);
  CHECK(bf16.job.precision.optimizer == 6);
  // Priced: ZeRO 1 over 8 ranks holds an eighth of the states, so half the bytes a parameter is half the states;
  // weights, gradients and activations are the same.
  const auto s = plan::presets::dgx_h100();
  const auto c = plan::cluster_of(s, s.device.gemm, 3.0);
  const auto a = model::price(mixed.job, c, mixed.layout), b = model::price(bf16.job, c, bf16.layout);
  CHECK(b.optimizer_states.value() == Approx(a.optimizer_states.value() / 2).epsilon(1e-12));
  CHECK(b.parameters == a.parameters);
  CHECK(b.gradients == a.gradients);
  CHECK(b.activations == a.activations);
  CHECK(a.device_bytes - b.device_bytes == a.optimizer_states - b.optimizer_states);
  CHECK(b.optimizer < a.optimizer);  // the update reads and writes fewer bytes
  CHECK_THROWS_WITH(
      io::read_published_runs(runs_with(R"(, "state_bytes": {"parameter": 2, "gradient": 2, "optimiser": 6})")),
      Catch::Contains("runs[0].state_bytes.optimiser: unknown key"));
  CHECK_THROWS_WITH(
      io::read_published_runs(runs_with(R"(, "state_bytes": {"parameter": 2, "gradient": -2, "optimizer": 6})")),
      Catch::Contains("runs[0].state_bytes.gradient: must be a positive number of bytes"));
  CHECK_THROWS_WITH(
      io::read_published_runs(runs_with(R"(, "state_bytes": {"parameter": 2, "gradient": 2, "optimizer": -1})")),
      Catch::Contains("runs[0].state_bytes.optimizer: must be a number of bytes, 0 or more"));
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "state_bytes": {"parameter": 2, "gradient": 2})")),
                    Catch::Contains("runs[0].state_bytes.optimizer"));
}

TEST_CASE("a published run keeps its fp8 weights alone where it says fp8_params, and only under fp8", "[io]") {
  const auto runs_with = [](const std::string& extra, const std::string& zero = "1") {
    return io::parse(R"({"sources": {"s": "a source"}, "runs": [{"name": "r", "source": "s", "role": "held-out",
        "system": "dgx-h100", "gpus": 8, "model": {"layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16,
        "kv_heads": 16, "vocabulary": 50304, "gated_mlp": false}, "sequence": 2048, "global_batch": 64,
        "parallelism": "tp=1,pp=1,cp=1,dp=8,mbs=1,recompute=none,sp=off", "zero": )" +
                         zero + extra + R"(, "published": {"iteration_s": 1.5}}]})",
                     "runs.json");
  };
  CHECK_FALSE(io::read_published_runs(runs_with(R"(, "precision": "fp8")")).runs.at(0).job.fp8_params);
  const auto kept = io::read_published_runs(runs_with(R"(, "precision": "fp8", "fp8_params": true)")).runs.at(0);
  CHECK(kept.job.fp8);
  CHECK(kept.job.fp8_params);
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "fp8_params": true)")),
                    Catch::Contains("runs[0].fp8_params: keeps the GEMM weights in fp8; the run's precision must be"));
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "precision": "fp8", "fp8_param": true)")),
                    Catch::Contains("runs[0].fp8_param: unknown key"));
  // The layout's optimizer must shard: zero=0 is refused at the run's parallelism.
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "precision": "fp8", "fp8_params": true)", "0")),
                    Catch::Contains("runs[0].parallelism: zero: weights kept in fp8 alone"));
}

TEST_CASE("a published mixture's run reads a workload's routing keys, priced as the workload prices them", "[io]") {
  const auto runs_with = [](const std::string& extra, const std::string& experts = R"(, "experts": 8, "top_k": 2)") {
    return io::parse(R"({"sources": {"s": "a source"}, "runs": [{"name": "r", "source": "s", "role": "held-out",
        "system": "dgx-h100", "gpus": 8, "model": {"layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16,
        "kv_heads": 16, "vocabulary": 50304, "gated_mlp": true)" +
                         experts + R"(}, "sequence": 2048, "global_batch": 64,
        "parallelism": "tp=1,pp=1,cp=1,dp=8,mbs=1,recompute=none,sp=off,ep=8", "zero": 1)" +
                         extra + R"(, "published": {"iteration_s": 1.5}}]})",
                     "runs.json");
  };
  const auto run = [&](const std::string& extra) { return io::read_published_runs(runs_with(extra)).runs.at(0); };
  const auto balanced = run(""), skewed = run(R"(, "expert_imbalance": 2)"),
             capped = run(R"(, "expert_imbalance": 2, "capacity_factor": 1.5)");
  CHECK((balanced.job.expert_imbalance == 1 && balanced.job.capacity_factor == 0));
  CHECK((capped.job.expert_imbalance == 2 && capped.job.capacity_factor == 1.5));
  CHECK(capped.job.expert_load() == 1.5);  // the cap binds below the skew
  const auto s = plan::presets::dgx_h100();
  const auto c = plan::cluster_of(s, s.device.gemm, 3.0);
  const auto step = [&](const io::published_run& r) { return model::price(r.job, c, r.layout).step; };
  CHECK(step(balanced) < step(capped));
  CHECK(step(capped) < step(skewed));
  // The keys are refused as a workload refuses them, named at their path in the file.
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "capacity_factor": 0.5)")),
                    Catch::Contains("runs[0].capacity_factor: must be at least 1"));
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "expert_imbalance": 9)")),
                    Catch::Contains("runs[0].expert_imbalance: must be from 1 (balanced) to the 8 experts"));
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "capacity_factor": 1)", "")),
                    Catch::Contains("runs[0].capacity_factor: describes a mixture of experts' routing"));
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "capacity_factr": 1)")),
                    Catch::Contains("runs[0].capacity_factr: unknown key"));
}

TEST_CASE("a published run and a workload name the attention kernel they run, and are priced with its curve", "[io]") {
  const auto runs_with = [](const std::string& system, const std::string& extra) {
    return io::parse(R"({"sources": {"s": "a source"}, "runs": [{"name": "r", "source": "s", "role": "held-out",
        "system": ")" + system +
                         R"(", "gpus": 8, "model": {"layers": 24, "hidden": 2048, "ffn_hidden": 8192,
        "heads": 16, "kv_heads": 16, "vocabulary": 50304, "gated_mlp": false}, "sequence": 4096, "global_batch": 64,
        "parallelism": "tp=1,pp=1,cp=1,dp=8,mbs=1,recompute=none,sp=off")" +
                         extra + R"(, "published": {"iteration_s": 1.5}}]})",
                     "runs.json");
  };
  const auto s = plan::presets::dgx_h100();
  const auto fa2 = plan::attention_kernel_curve(s, "flash-attention-2", "k");
  const io::parallel_calibration cal;
  const auto own = io::read_published_runs(runs_with("dgx-h100", R"(, "flash_attention": true)"));
  const auto named = io::read_published_runs(
      runs_with("dgx-h100", R"(, "flash_attention": true, "attention_kernel": "flash-attention-2")"));
  CHECK(own.runs.at(0).attention_kernel.empty());
  CHECK(named.runs.at(0).attention_kernel == "flash-attention-2");
  CHECK(cal.cluster(own.runs.at(0)).attention == s.device.attention);
  CHECK(cal.cluster(named.runs.at(0)).attention == fa2);
  // Priced: only the attention core changes, and it grows.
  const auto a = model::price(own.runs.at(0).job, cal.cluster(own.runs.at(0)), own.runs.at(0).layout);
  const auto b = model::price(named.runs.at(0).job, cal.cluster(named.runs.at(0)), named.runs.at(0).layout);
  CHECK(b.attention > a.attention);
  CHECK(b.gemm == a.gemm);
  CHECK(b.device_bytes == a.device_bytes);
  CHECK_THROWS_WITH(io::read_published_runs(runs_with("dgx-h100", R"(, "flash_attention": true,
      "attention_kernel": "fa2")")),
                    Catch::Contains("runs[0].attention_kernel: \"fa2\" is no measured kernel; the kernels are cudnn"));
  CHECK_THROWS_WITH(io::read_published_runs(runs_with("dgx-h100", R"(, "flash_attention": false,
      "attention_kernel": "cudnn")")),
                    Catch::Contains("runs[0].attention_kernel: names a fused kernel, but flash_attention is false"));
  const auto a100 = io::read_published_runs(
      runs_with("dgx-a100", R"(, "flash_attention": true, "attention_kernel": "flash-attention-2")"));
  CHECK_THROWS_WITH(cal.cluster(a100.runs.at(0)),
                    Catch::StartsWith("runs[r].attention_kernel: no attention kernel was measured on a100"));

  // The workload: the same key, the same curve, the same refusals.
  const std::string shape = R"({"name": "w", "type": "training", "layers": 24, "hidden": 2048, "ffn_hidden": 8192,
      "heads": 16, "vocabulary": 50304, "sequence": 4096)";
  const auto w =
      workloads::read_workload(io::parse(shape + R"(, "attention_kernel": "flash-attention-2"})", "w.json"), s)
          .as<plan::training_workload>();
  CHECK(w.attention_kernel == "flash-attention-2");
  CHECK(plan::cluster_of(s, w).attention == fa2);
  const auto plain = workloads::read_workload(io::parse(shape + "}", "w.json"), s).as<plan::training_workload>();
  CHECK(plan::cluster_of(s, plain).attention == s.device.attention);
  CHECK(error_of(shape + R"(, "attention_kernel": "flash-attn"})", [&](const json& j) {
          workloads::read_workload(j, s);
        }) == "attention_kernel: \"flash-attn\" is no measured kernel; the kernels are cudnn, flash-attention-2");
  CHECK(error_of(shape + R"(, "flash_attention": false, "attention_kernel": "cudnn"})", [&](const json& j) {
          workloads::read_workload(j, s);
        }).starts_with("attention_kernel: names a fused kernel, but flash_attention is false"));
  CHECK(error_of(shape + R"(, "attention_kernel": "cudnn"})", [&](const json& j) {
          workloads::read_workload(j, plan::presets::dgx_a100());
        }).starts_with("attention_kernel: no attention kernel was measured on a100"));
  CHECK(error_of(R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 8, "hidden": 1024,
      "sequence": 1024, "attention_kernel": "cudnn"})",
                 [&](const json& j) { workloads::read_workload(j, s); })
            .starts_with("attention_kernel: describes a transformer's shape"));
}

TEST_CASE("a published run and a workload name the loss's kernel, by Megatron-Core's names, and are priced with it",
          "[io]") {
  const auto runs_with = [](const std::string& extra) {
    return io::parse(R"({"sources": {"s": "a source"}, "runs": [{"name": "r", "source": "s", "role": "held-out",
        "system": "dgx-h100", "gpus": 8, "model": {"layers": 24, "hidden": 2048, "ffn_hidden": 8192, "heads": 16,
        "kv_heads": 16, "vocabulary": 50304, "gated_mlp": false}, "sequence": 2048, "global_batch": 64,
        "parallelism": "tp=1,pp=1,cp=1,dp=8,mbs=1,recompute=none,sp=off")" +
                         extra + R"(, "published": {"iteration_s": 1.5}}]})",
                     "runs.json");
  };
  const auto native = io::read_published_runs(runs_with("")).runs.at(0);
  const auto te = io::read_published_runs(runs_with(R"(, "cross_entropy": "te")")).runs.at(0);
  CHECK(native.job.cross_entropy == model::loss_kernel::native);
  CHECK(io::read_published_runs(runs_with(R"(, "cross_entropy": "native")")).runs.at(0).job.cross_entropy ==
        model::loss_kernel::native);
  CHECK(te.job.cross_entropy == model::loss_kernel::transformer_engine);
  // Priced: only the loss's memory-bound time and the bytes it keeps change, and both shrink.
  const io::parallel_calibration cal;
  const auto a = model::price(native.job, cal.cluster(native), native.layout);
  const auto b = model::price(te.job, cal.cluster(te), te.layout);
  CHECK(b.elementwise < a.elementwise);
  CHECK(b.activations < a.activations);
  CHECK(b.gemm == a.gemm);
  CHECK(b.attention == a.attention);
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "cross_entropy": "nativ")")),
                    Catch::Contains("runs[0].cross_entropy: \"nativ\" is not allowed; did you mean \"native\"?"));
  CHECK_THROWS_WITH(io::read_published_runs(runs_with(R"(, "cross_entropy": "liger")")),
                    Catch::Contains("runs[0].cross_entropy: \"liger\" is not allowed; expected one of native, te"));

  // The workload: the same key and words, assumed "native" when left out, passed to the job it prices.
  const auto s = plan::presets::dgx_h100();
  const std::string shape = R"({"name": "w", "type": "training", "layers": 24, "hidden": 2048, "ffn_hidden": 8192,
      "heads": 16, "vocabulary": 50304, "sequence": 4096)";
  const auto w = workloads::read_workload(io::parse(shape + R"(, "cross_entropy": "te"})", "w.json"), s)
                     .as<plan::training_workload>();
  CHECK(w.cross_entropy == model::loss_kernel::transformer_engine);
  CHECK(plan::job_of(w, 8).cross_entropy == model::loss_kernel::transformer_engine);
  const auto plain = workloads::read_workload(io::parse(shape + "}", "w.json"), s).as<plan::training_workload>();
  CHECK(plain.cross_entropy == model::loss_kernel::native);
  CHECK(plan::describe(plain.assumed).find("cross_entropy \"native\"") != std::string::npos);
  CHECK(error_of(shape + R"(, "cross_entropy": "fused"})", [&](const json& j) { workloads::read_workload(j, s); }) ==
        "cross_entropy: \"fused\" is not allowed; expected one of native, te");
  // Without a transformer's shape there are no logits to take a loss over.
  CHECK(error_of(R"({"name": "w", "type": "training", "parameters": 1e9, "layers": 24, "hidden": 2048,
      "sequence": 4096, "cross_entropy": "te"})",
                 [&](const json& j) { workloads::read_workload(j, s); })
            .starts_with("cross_entropy: describes a transformer's shape"));
}

}  // namespace io_readers_test
