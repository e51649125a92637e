// The plain-text numbers every printed plan shares (reports/text.hpp), and the preset catalogue's sections
// (workloads/preset_catalogue.hpp): each lists every entry its lookup finds, so none is missing from `trinity
// presets`.
#include <catch2/catch.hpp>

#include <trinity/model/named_shapes.hpp>
#include <trinity/workloads/preset_catalogue.hpp>
#include <trinity/reports/text.hpp>

#include <sstream>
#include <string>

namespace reports_text_test {

using namespace trinity;

TEST_CASE("a whole number prints with its thousands grouped", "[reports]") {
  CHECK(reports::whole_grouped(0) == "0");
  CHECK(reports::whole_grouped(999.4) == "999");
  CHECK(reports::whole_grouped(999.6) == "1,000");
  CHECK(reports::whole_grouped(161420.7) == "161,421");
  CHECK(reports::whole_grouped(1234567) == "1,234,567");
  CHECK(reports::whole_grouped(-1234567) == "-1,234,567");
}

TEST_CASE("the preset catalogue lists every workload, model, stack and system its lookups know", "[reports]") {
  const auto j = workloads::presets_json("");
  std::size_t sections = 0;
  for (const auto name : workloads::preset_section_names()) sections += j.contains(std::string(name));
  CHECK(sections == workloads::preset_section_names().size());
  REQUIRE(j.at("workloads").size() == workloads::preset_names().size());
  for (std::size_t i = 0; i < j.at("workloads").size(); ++i) {
    const auto& w = j.at("workloads")[i];
    const auto plain = workloads::find_preset(w.at("name").get<std::string>(), plan::presets::dgx_h100());
    REQUIRE(plain.has_value());
    CHECK(plain->type() == w.at("type").get<std::string>());  // the kind that reads it
  }
  CHECK(j.at("models").size() == model::named_shapes().size());
  CHECK(j.at("stacks").size() == plan::stacks::names().size() + plan::serving_stacks::names().size());
  CHECK(j.at("systems").size() == plan::presets::names().size());
  CHECK(j.at("systems")[2].at("scale_out").is_object() ==
        plan::presets::find(plan::presets::names()[2])->scale_out.has_value());
  CHECK(workloads::presets_json("stacks").size() == 1);  // one section alone
  CHECK_THROWS_WITH(workloads::presets_json("workload"), Catch::Contains("did you mean \"workloads\""));
  std::ostringstream text;
  workloads::print_presets(text, "models");
  CHECK(text.str().find("deepseek-v3") != std::string::npos);
  CHECK(text.str().find("h100-sxm") == std::string::npos);  // the models alone
}

}  // namespace reports_text_test
