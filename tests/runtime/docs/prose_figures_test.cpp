#include <catch2/catch.hpp>

#include "../../../tools/docgen/prose_figures.hpp"

#include <cmath>
#include <string>
#include <vector>

// trinity-docgen's inline figures (tools/docgen/prose_figures.hpp): what a marker in the docs' prose holds, held
// to the published runs as `trinity validate` prices them.

namespace docs_prose_figures_test {

namespace {
const docgen::priced_runs& runs() {
  static const docgen::priced_runs r{TRINITY_SOURCE_DIR};
  return r;
}
std::string marker(const std::string& spec, const std::string& text) {
  return "<!-- figure: " + spec + " -->" + text + "<!-- end figure -->";
}
}  // namespace

TEST_CASE("prose figures: each kind reads the priced run", "[docs]") {
  const auto& oss = runs().at("gpt-oss-120b/64");
  REQUIRE(oss.error < 0);
  CHECK(docgen::figure(runs(), "fast \"gpt-oss-120b/64\"") == std::to_string(std::lround(-oss.error * 100)));
  CHECK(docgen::figure(runs(), "mfu \"gpt-oss-120b/64\"") == std::to_string(std::lround(oss.cost.mfu * 100)));
  CHECK(docgen::figure(runs(), "share \"gpt-oss-120b/64\" gemm") ==
        std::to_string(std::lround(oss.cost.gemm / oss.cost.step * 100)));
  CHECK(docgen::figure(runs(), "gb \"gpt-oss-120b/64\"") ==
        std::to_string(std::lround(oss.cost.device_bytes.value() / 1e9)));
  // A ratio of steps, published or predicted, OTHER's over RUN's.
  const auto &fp8 = runs().at("gpt3-175b/128 fp8"), &bf16 = runs().at("gpt3-175b/128");
  char want[16];
  std::snprintf(want, sizeof want, "%.2f", bf16.run->iteration_s / fp8.run->iteration_s);
  CHECK(docgen::figure(runs(), "measured-speedup \"gpt3-175b/128 fp8\" \"gpt3-175b/128\"") == want);
  std::snprintf(want, sizeof want, "%.2f", bf16.cost.step / fp8.cost.step);
  CHECK(docgen::figure(runs(), "speedup \"gpt3-175b/128 fp8\" \"gpt3-175b/128\"") == want);
  std::snprintf(want, sizeof want, "%.1f", oss.run->iteration_s / oss.cost.step.value());
  CHECK(docgen::figure(runs(), "ratio \"gpt-oss-120b/64\"") == want);
}

TEST_CASE("prose figures: `within` bounds a source's held-out runs of one precision by the worst of them", "[docs]") {
  // The DGX Cloud dense runs: 16 in all, half in fp8, the worst of each named here by hand.
  const auto bound = [](const char* run) {
    return std::to_string(static_cast<long>(std::ceil(std::abs(runs().at(run).error) * 100)));
  };
  CHECK(docgen::figure(runs(), "within dgxc2409 bf16") == bound("llama3.1-70b/2048 cp2"));
  CHECK(docgen::figure(runs(), "within dgxc2409 fp8") == bound("llama3.1-70b/2048 cp2 fp8"));
  int bf16 = 0, fp8 = 0;
  for (const auto& [name, p] : runs().by_name()) {
    if (p.run->source != "dgxc2409") continue;
    INFO(name);
    CHECK(std::abs(p.error) * 100 <=
          std::stod(bound(p.run->job.fp8 ? "llama3.1-70b/2048 cp2 fp8" : "llama3.1-70b/2048 cp2")));
    ++(p.run->job.fp8 ? fp8 : bf16);
  }
  CHECK(bf16 == 8);
  CHECK(fp8 == 8);
  CHECK_THROWS_WITH(docgen::figure(runs(), "within dgxc2409 fp16"), Catch::Contains("fp16 is not a precision"));
  CHECK_THROWS_WITH(docgen::figure(runs(), "within nobody bf16"), Catch::Contains("no held-out run of source nobody"));
}

TEST_CASE("prose figures: a drifted figure is rewritten and reported, a sentence the model reversed is refused",
          "[docs]") {
  const std::string now = docgen::figure(runs(), "fast \"gpt-oss-120b/64\"");
  const std::string right = "comes out " + marker("fast \"gpt-oss-120b/64\"", now) + "% fast, and more";
  std::vector<std::string> stale;
  CHECK(docgen::with_figures(right, runs(), stale) == right);
  CHECK(stale.empty());
  const std::string drifted = "comes out " + marker("fast \"gpt-oss-120b/64\"", "99") + "% fast, and " +
                              marker("mfu \"gpt-oss-120b/64\"", "1") + "% MFU";
  const auto rewritten = docgen::with_figures(drifted, runs(), stale);
  REQUIRE(stale.size() == 2);
  CHECK_THAT(stale[0], Catch::Contains("the prose says 99, the runs give " + now));
  CHECK(rewritten == "comes out " + marker("fast \"gpt-oss-120b/64\"", now) + "% fast, and " +
                         marker("mfu \"gpt-oss-120b/64\"", docgen::figure(runs(), "mfu \"gpt-oss-120b/64\"")) +
                         "% MFU");
  // GPT-OSS is priced fast: a sentence calling it slow cannot be fixed by its number.
  CHECK_THROWS_WITH(docgen::with_figures(marker("slow \"gpt-oss-120b/64\"", now), runs(), stale),
                    Catch::Contains("the run now comes out fast") && Catch::Contains("reword it"));
}

TEST_CASE("prose figures: a marker that names nothing is refused, naming what", "[docs]") {
  std::vector<std::string> stale;
  CHECK_THROWS_WITH(docgen::figure(runs(), "fast \"no-such-run\""), Catch::Contains("\"no-such-run\" is not a run"));
  CHECK_THROWS_WITH(docgen::figure(runs(), "median \"gpt-oss-120b/64\""), Catch::Contains("unknown kind"));
  CHECK_THROWS_WITH(docgen::figure(runs(), "share \"gpt-oss-120b/64\" lunch"),
                    Catch::Contains("lunch is not a part of the step"));
  CHECK_THROWS_WITH(docgen::figure(runs(), "speedup \"gpt-oss-120b/64\""), Catch::Contains("expected 2 after speedup"));
  CHECK_THROWS_WITH(docgen::figure(runs(), "fast \"gpt-oss-120b/64"), Catch::Contains("a name is not closed"));
  CHECK_THROWS_WITH(docgen::with_figures("<!-- figure: fast \"gpt-oss-120b/64\" -->35% fast", runs(), stale),
                    Catch::Contains("without its <!-- end figure --> on the same line"));
}

TEST_CASE("prose figures: `runs` counts the file's runs by role, `over-memory` those the model puts over", "[docs]") {
  // Counted from the file itself, not through the reader the figures use.
  const auto file = trinity::io::load(TRINITY_SOURCE_DIR "/bench/published/training-runs.json");
  std::size_t all = 0, held_out = 0, fit = 0;
  for (const auto& r : file.at("runs")) {
    ++all;
    held_out += r.at("role") == "held-out";
    fit += r.at("role") == "fit";
  }
  REQUIRE(all == held_out + fit);
  CHECK(docgen::figure(runs(), "runs") == std::to_string(all));
  CHECK(docgen::figure(runs(), "runs held-out") == std::to_string(held_out));
  CHECK(docgen::figure(runs(), "runs fit") == std::to_string(fit));
  // Over: predicted bytes past the device's memory, whatever the `fits` flag says.
  std::size_t over = 0;
  for (const auto& [name, p] : runs().by_name()) over += p.cost.device_bytes > p.memory;
  CHECK(over > 0);  // the docs' sentence names runs the model overcounts; none would make it false
  CHECK(docgen::figure(runs(), "over-memory") == std::to_string(over));
  CHECK_THROWS_WITH(docgen::figure(runs(), "runs measured"), Catch::Contains("measured is not a role"));
  CHECK_THROWS_WITH(docgen::figure(runs(), "runs fit held-out"), Catch::Contains("takes one role at most"));
  CHECK_THROWS_WITH(docgen::figure(runs(), "over-memory fit"), Catch::Contains("takes nothing"));
}

}  // namespace docs_prose_figures_test
