// A system as data: every preset written as JSON (io::write_system) reads back into a system that prices every
// preset workload as the preset does; a JSON device starts from a device preset or a profile file and keeps its
// measured curves; what cannot be read is refused by path.

#include <catch2/catch.hpp>

#include <trinity/io.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/registry.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace io_system_json_test {

using namespace trinity;
using io::json;

namespace {

// What `plan` prints for a system and a preset workload, as JSON or text; a refusal's message where it refuses.
std::string plan_output(const plan::system& s, std::string_view workload, bool as_json) {
  std::ostringstream out;
  try {
    auto w = workloads::find_preset(workload, s);
    REQUIRE(w.has_value());
    workloads::request a;
    a.json = as_json;
    workloads::plan(a, s, *w, out);
  } catch (const std::exception& e) {
    return std::string("refused: ") + e.what();
  }
  return out.str();
}

// The system a JSON copy of `s` reads into, through the text a file would hold.
plan::system copied(const plan::system& s, const std::filesystem::path& base = {}) {
  return io::read_system(io::parse(io::write_system(s).dump(2), "copy.json"), base);
}

std::string refusal(const std::string& text, const std::filesystem::path& base = {}) {
  try {
    io::read_system(io::parse(text, "test.json"), base);
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "";
}

// dgx-h100 as a file would give it, its device a preset of `count` devices.
std::string dgx_h100_with(const std::string& device) {
  json j = io::write_system(*plan::presets::find("dgx-h100"));
  j["device"] = json::parse(device);
  return j.dump();
}

}  // namespace

TEST_CASE("every preset system written as JSON prices every preset workload as the preset does", "[io][plan]") {
  std::size_t priced = 0;
  for (const auto name : plan::presets::names()) {
    const auto preset = *plan::presets::find(name);
    const auto copy = copied(preset);
    CHECK(copy.assumed == preset.assumed);
    // Written again, the copy is the same file: nothing was lost on the way.
    CHECK(io::write_system(copy) == io::write_system(preset));
    for (const auto workload : workloads::preset_names()) {
      INFO(std::string(name) + " " + std::string(workload));
      const auto expected = plan_output(preset, workload, true);
      CHECK(plan_output(copy, workload, true) == expected);
      CHECK(plan_output(copy, workload, false) == plan_output(preset, workload, false));
      priced += expected.rfind("refused: ", 0) != 0;
    }
  }
  // Most pairs plan: the comparison is of prices, not of two refusals.
  CHECK(priced >= 40);
}

TEST_CASE("a device preset brings its measured curves: a node written by hand prices as the DGX preset", "[io][plan]") {
  const auto preset = *plan::presets::find("dgx-h100");
  const auto s = io::read_system(io::parse(dgx_h100_with(R"({"preset": "h100-sxm", "count": 8})"), "box.json"));
  CHECK(s.device.attention == preset.device.attention);
  CHECK(s.device.attention.measured());
  CHECK(s.device.gemm.ceiling == preset.device.gemm.ceiling);
  CHECK(s.device.serving == preset.device.serving);
  CHECK(s.device.rate("fp8") == preset.device.rate("fp8"));
  for (const auto workload : {"llm-70b-train", "llama3-70b-serve"})
    CHECK(plan_output(s, workload, true) == plan_output(preset, workload, true));

  // Named by its kernel, the attention curve is the measured one; a curve's constants are read as given.
  const auto named = io::read_system(io::parse(
      dgx_h100_with(R"({"name": "g", "compute": "989TFLOPs", "power": "700W", "count": 8, "attention": "cudnn"})"),
      "box.json"));
  CHECK(named.device.attention == preset.device.attention);
  CHECK(named.device.rate("fp8").value() == 989e12);
  const auto given = io::read_system(io::parse(dgx_h100_with(R"({"preset": "h100-sxm", "count": 8, "attention":
      {"forward": 0.5, "forward_knee": 400, "backward": 0.4, "backward_knee": 700, "head_dim_knee": 20}})"),
                                               "box.json"));
  CHECK(given.device.attention == model::fused_attention_efficiency{0.5, 400, 0.4, 700, 20});
}

TEST_CASE("a device's given fields override its preset, and a given compute replaces every rate", "[io]") {
  const auto s = io::read_system(
      io::parse(dgx_h100_with(R"({"preset": "h100-sxm", "count": 16, "compute": "500TFLOPs", "idle_power": "75W",
                       "serving": {"layer_overhead": "1ms", "kv_read_per_query_head": true}})"),
                "box.json"));
  CHECK(s.device.count == 16);
  CHECK(s.device.compute.value() == 500e12);
  CHECK_FALSE(s.device.lists_rate("fp8"));
  CHECK(s.device.idle_power.value() == 75);
  CHECK(s.device.serving.layer_overhead.value() == 1e-3);
  CHECK(s.device.serving.kv_read_per_query_head);
  // The constants it does not name are the preset's.
  CHECK(s.device.serving.hbm_share == plan::presets::h100_sxm().serving.hbm_share);
  CHECK(s.device.gemm.half_size == plan::presets::h100_sxm().gemm.half_size);
  // bf16 in a rate object is the device's rate, not a listed one.
  const auto r = io::read_system(io::parse(
      dgx_h100_with(R"({"compute": {"bf16": "1PFLOPs", "fp8": "2PFLOPs"}, "power": "1kW", "count": 8})"), "b.json"));
  CHECK(r.device.compute.value() == 1e15);
  CHECK(r.device.rate("fp8").value() == 2e15);
  CHECK_FALSE(r.device.lists_rate("bf16"));
}

TEST_CASE("a device profile file beside the system file is its device, the system's fields over it", "[io]") {
  const auto dir = std::filesystem::temp_directory_path() / ("trinity-system-json-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "profiles");
  { std::ofstream(dir / "profiles" / "gpu.json") << io::write_device(plan::presets::h200_sxm(), "device", {}, false); }
  const auto s = io::read_system(
      io::parse(dgx_h100_with(R"({"profile": "profiles/gpu.json", "count": 8, "idle_power": "80W"})"), "box.json"),
      dir);
  const auto h200 = plan::presets::h200_sxm();
  CHECK(s.device.name == h200.name);
  CHECK(s.device.serving == h200.serving);
  CHECK(s.device.attention == h200.attention);
  CHECK(s.device.gemm.half_size == h200.gemm.half_size);
  CHECK(s.device.idle_power.value() == 80);
  CHECK(s.device.count == 8);
  // The profile's own figures are not defaults: nothing of the device is listed as assumed.
  for (const auto& a : s.assumed) CHECK(a.field.rfind("device.", 0) != 0);

  // A profile is a device without its count, and names no other file.
  { std::ofstream(dir / "counted.json") << R"({"preset": "h100-sxm", "count": 8})"; }
  CHECK(refusal(dgx_h100_with(R"({"profile": "counted.json", "count": 8})"), dir).find("count: unknown key") !=
        std::string::npos);
  CHECK(refusal(dgx_h100_with(R"({"profile": "none.json", "count": 8})"), dir) ==
        R"(device.profile: "none.json": cannot be read: no such file)");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a device that cannot be read is refused by path, with the fix", "[io]") {
  CHECK(refusal(dgx_h100_with(R"({"preset": "h100-sx", "count": 8})")) ==
        R"(device.preset: "h100-sx" is not a device preset; did you mean "h100-sxm"?)");
  CHECK(refusal(dgx_h100_with(R"({"preset": "h100-sxm", "profile": "p.json", "count": 8})")) ==
        "device.profile: a device starts from a preset or from a profile file, not both. Fix: keep one");
  CHECK(refusal(dgx_h100_with(R"({"power": "700W", "count": 8})")) ==
        "device.compute: missing; a device needs it, or a \"preset\" (gb200-gpu, b200-sxm, h100-sxm, h200-sxm, "
        "a100-sxm-80gb, "
        "jetson-orin-nano) or a \"profile\" file to start from");
  CHECK(refusal(dgx_h100_with(R"({"preset": "h100-sxm"})")) == "device.count: missing; a device needs it");
  CHECK(refusal(dgx_h100_with(R"({"preset": "h100-sxm", "count": 8, "attention": "cudn"})"))
            .starts_with(R"(device.attention: "cudn" is no measured kernel; did you mean "cudnn"?)"));
  // Every missing constant at once, the first leading.
  CHECK(refusal(dgx_h100_with(R"({"preset": "h100-sxm", "count": 8, "attention": {"forward": 0.5}})")) ==
        "device.attention.forward_knee: missing; a measured kernel's name or a fused attention curve needs it (and "
        "device.attention.backward: missing; a measured kernel's name or a fused attention curve needs it; "
        "device.attention.backward_knee: missing; a measured kernel's name or a fused attention curve needs it; "
        "device.attention.head_dim_knee: missing; a measured kernel's name or a fused attention curve needs it)");
  CHECK(refusal(dgx_h100_with(R"({"preset": "h100-sxm", "count": 8, "serving": {"hbm_shar": 0.5}})")) ==
        R"(device.serving.hbm_shar: unknown key; did you mean "hbm_share"?)");
  CHECK(refusal(dgx_h100_with(R"({"preset": "h100-sxm", "count": 8, "serving": {"hbm_share": 1.5}})")) ==
        "device.serving.hbm_share: is a share, above 0 and at most 1");
}

}  // namespace io_system_json_test
