#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <vector>

#include <trinity/io/parallel_layout.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/model/pipeline_layout.hpp>

#include "test_cluster.hpp"

namespace model_pipeline_layout_test {

using namespace trinity;
using namespace trinity::model;

namespace {
// check_pipeline_layout's verdict as the text a user reads, empty where the chunks break no rule.
std::string chunks_text(const std::vector<pipeline_chunk>& chunks, std::size_t pp, std::size_t vpp, std::size_t layers,
                        std::size_t predictions) {
  return message_of(check_pipeline_layout(chunks, pp, vpp, layers, predictions));
}
std::vector<std::size_t> layers_of(const std::string& text) {
  std::vector<std::size_t> out;
  for (const auto& c : parse_pipeline_layout(text)) out.push_back(c.layers);
  return out;
}
std::string refusal(const std::string& text) {
  try {
    parse_pipeline_layout(text);
  } catch (const invalid_input& e) {
    return e.what();
  }
  return "accepted";
}
}  // namespace

TEST_CASE("a pipeline layout unrolls its repeats as Megatron-Core's parse_str_to_list does", "[model][parallel]") {
  // Bridge's DeepSeek-V3 layout for 8 stages of 4 chunks: the embedding and one layer, thirty chunks of two, then
  // the prediction module and the loss.
  const auto deepseek = parse_pipeline_layout("Et|(tt|)*30mL");
  REQUIRE(deepseek.size() == 32);
  CHECK(deepseek.front() == pipeline_chunk{1, 0, true, false});
  CHECK(deepseek.back() == pipeline_chunk{0, 1, false, true});
  for (std::size_t c = 1; c < 31; ++c) CHECK(deepseek[c] == pipeline_chunk{2, 0, false, false});
  // Megatron-Core's own examples (its docstring and regex comments), with the cosmetic commas left out.
  CHECK(layers_of("Ettt|(tt|)*29L") == [] {
    std::vector<std::size_t> v{3};
    v.insert(v.end(), 29, 2);
    v.push_back(0);
    return v;
  }());
  CHECK(layers_of("Ettt|(tt|)*29|L").size() == 32);  // a separator after the group's own: an empty chunk
  CHECK(layers_of("E(t*2|)*3L") == std::vector<std::size_t>{2, 2, 2, 0});  // a repeat inside a group
  CHECK(layers_of("Et*3|t*3|L") == std::vector<std::size_t>{3, 3, 0});
  CHECK(layers_of("E|t|t|L") == std::vector<std::size_t>{0, 1, 1, 0});  // chunks may be empty
  CHECK(layers_of("Et|*2tL") == std::vector<std::size_t>{1, 0, 1});     // a repeated separator, an empty chunk
  CHECK(layers_of("EtttL") == std::vector<std::size_t>{3});
  // Commas are cosmetic, dropped before the rest is read, as Megatron-Core drops them: inside a count as well.
  CHECK(layers_of("Ettt|(tt|)*29,|L") == layers_of("Ettt|(tt|)*29|L"));
  CHECK(layers_of("E,t*1,0,L") == std::vector<std::size_t>{10});

  // Rank r holds chunks r, r + pp, ...: DeepSeek-V3's first stage 1 + 3·2 = 7, the middle 8, the last 6.
  const auto per_rank = layers_per_rank(deepseek, 8);
  CHECK(per_rank == std::vector<std::size_t>{7, 8, 8, 8, 8, 8, 8, 6});
  // Megatron-Bridge's Llama 3 70B recipe for 8 H100 stages of 5 chunks, commas and all: chunk 35 holds 3 layers
  // (rank 3 holds 11) and the last chunk 1 beside the loss (the last rank 9).
  const auto llama = parse_pipeline_layout("Et*2|(t*2|)*34,t*3|(t*2|)*3,tL");
  REQUIRE(llama.size() == 40);
  CHECK(layers_per_rank(llama, 8) == std::vector<std::size_t>{10, 10, 10, 11, 10, 10, 10, 9});
}

TEST_CASE("a pipeline layout that breaks a rule is refused, naming the character", "[model][parallel]") {
  using Catch::Contains;
  using Catch::StartsWith;
  CHECK_THAT(refusal(""), StartsWith("pipeline_layout: empty"));
  // With commas the error quotes the layout as read too, and counts characters in that.
  CHECK_THAT(refusal("Et,xL"), StartsWith("pipeline_layout: Et,xL (read without its commas as EtxL): 'x' at "
                                          "character 3 is not a mark") &&
                                   Contains("after a comma, an item with no '=' reads as more of the layout"));
  CHECK_THAT(refusal("Etx|L"), !Contains("after a comma"));
  CHECK_THAT(refusal(",,,"), Contains("has no marks"));
  CHECK_THAT(refusal("Etx|L"), Contains("'x' at character 3 is not a mark"));
  CHECK_THAT(refusal("E(tx|)*2L"), Contains("'x' at character 4 is not a mark"));  // inside a group, in the whole
  CHECK_THAT(refusal(std::string("Et\x01L")), Contains("Et\\x01L: byte \\x01 at character 3 is not a mark"));
  CHECK_THAT(refusal(std::string("Et\xffL")), Contains("byte \\xff at character 3 is not a mark"));
  CHECK_THAT(refusal(std::string("Et\0L", 4)), Contains("Et\\x00L: byte \\x00 at character 3"));
  CHECK_THAT(refusal("E(t|"), Contains("the '(' at character 2 is never closed"));
  CHECK_THAT(refusal("E()*2L"), Contains("an empty group () at character 2"));
  CHECK_THAT(refusal("E((t|)*2)*2L"), Contains("a group inside a group at character 2"));
  CHECK_THAT(refusal("E(tt|)L"), Contains("the group closed at character 6 wants a count"));
  CHECK_THAT(refusal("Et*0L"), Contains("'*' at character 3 wants a count of at least 1"));
  CHECK_THAT(refusal("Et*L"), Contains("'*' at character 3 wants a count of at least 1"));
  CHECK_THAT(refusal("E(tt|)*2*3L"), Contains("a repeat of a repeat at character 9"));
  CHECK_THAT(refusal("Et*100001L"), Contains("a repeat past 100000 at character 4"));
  CHECK_THAT(refusal("Et*999999999999999999999999L"), Contains("a repeat past 100000"));  // no overflow first
  CHECK_THAT(refusal("E(t*1000|)*1000L"), Contains("unrolls to more than 100000 marks"));
  CHECK(refusal("Et*99998L") == "accepted");  // 100,000 marks: the cap
  CHECK_THAT(refusal("Et*99999L"), Contains("unrolls to more than 100000 marks"));
  CHECK_THAT(refusal("|||"), Contains("has no marks"));
  CHECK_THAT(refusal("tEL"), Contains("the first mark must be E"));
  CHECK_THAT(refusal("EtLt"), Contains("the last mark must be L"));
  CHECK_THAT(refusal("EtE|tL"), Contains("E, the embedding, appears more than once"));
  CHECK_THAT(refusal("EtL|tL"), Contains("a loss split over stages is not priced"));
  CHECK_THAT(refusal("EtmtL"), Contains("a layer after a prediction module"));
  // Megatron-Core lets a prediction module stand on a stage of its own (its docstring's ..,m|L); trinity prices
  // them beside the logits and says so.
  CHECK_THAT(refusal("Ettt|(tt|)*29,m|L"), Contains("put every m in the last chunk"));
}

TEST_CASE("a pipeline layout must fit the model and the pipeline it is priced with", "[model][parallel]") {
  const auto chunks = parse_pipeline_layout("Et|(tt|)*30mL");
  CHECK(chunks_text(chunks, 8, 4, 61, 1).empty());
  CHECK(chunks_text(chunks, 16, 2, 61, 1).empty());
  CHECK_THAT(chunks_text(chunks, 1, 32, 61, 1), Catch::Contains("pp=1"));
  CHECK_THAT(chunks_text(chunks, 6, 5, 61, 1),
             Catch::Contains("its 32 chunks do not split over pp=6 stages; give a multiple of 6"));
  CHECK_THAT(chunks_text(chunks, 8, 2, 61, 1),
             Catch::Contains("its 32 chunks make vpp=4 on pp=8 stages, and the layout gives vpp=2"));
  CHECK_THAT(chunks_text(chunks, 8, 4, 60, 1), Catch::Contains("places 61 layers (t), and the model has 60"));
  CHECK_THAT(chunks_text(chunks, 8, 4, 61, 0),
             Catch::Contains("places 1 prediction modules (m), and the model has 0 (mtp_layers)"));
}

TEST_CASE("a layout's pipeline_layout key fixes vpp, reads back the same and excludes the stated-stage keys",
          "[model][parallel]") {
  const auto l = io::parse_parallel_layout("tp=2,pp=8,dp=64,sp=on,ep=64,zero=1,pipeline_layout=Et|(tt|)*30mL");
  CHECK(l.vpp == 4);
  CHECK(l.pipeline_layout == "Et|(tt|)*30mL");
  CHECK(to_string(l) ==
        "tp=2,pp=8,vpp=4,cp=1,dp=64,mbs=1,recompute=none,sp=on,zero=1,ep=64,etp=1,pipeline_layout=Et|(tt|)*30mL");
  CHECK(io::parse_parallel_layout(to_string(l)) == l);
  // The key's place in the list does not matter; vpp stated beside it is kept, and priced against it.
  CHECK(io::parse_parallel_layout("pipeline_layout=Et|(tt|)*30mL,pp=8").vpp == 4);
  CHECK(io::parse_parallel_layout("pp=8,vpp=2,pipeline_layout=Et|(tt|)*30mL").vpp == 2);
  // The defaults a layout assumed do not list vpp: the chunks gave it.
  const auto assumed = io::parallel_layout_defaults("pp=8,pipeline_layout=Et|(tt|)*30mL", l);
  for (const auto& a : assumed) CHECK(a.field != "vpp");

  using Catch::Contains;
  // Megatron's cosmetic commas: the items after the key with no '=' continue its value, kept as written.
  const auto llama = io::parse_parallel_layout("tp=4,pp=8,pipeline_layout=Et*2|(t*2|)*34,t*3|(t*2|)*3,tL,sp=on");
  CHECK((llama.vpp == 5 && llama.sequence_parallel && llama.tp == 4));
  CHECK(llama.pipeline_layout == "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL");
  CHECK(io::parse_parallel_layout(to_string(llama)) == llama);
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,pipeline_layout=Et|tL,tp4"),
                    Contains("parallelism: pipeline_layout=Et|tL,tp4 (read without its commas as Et|tLtp4): 'p' at "
                             "character 7 is not a mark") &&
                        Contains("after a comma, an item with no '=' reads as more of the layout"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,pipeline_layout=Et|tL,"), Contains("an empty item"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,pipeline_layout=Et|tL,,tp=2"), Contains("an empty item"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,pipeline_layout=EtxL"),
                    Contains("parallelism: pipeline_layout=EtxL: 'x' at character 3 is not a mark"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,pipeline_layout="),
                    Contains("parallelism: pipeline_layout=: name the chunks"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,first_stage_layers=1,pipeline_layout=Et|tL"),
                    Contains("first_stage_layers: pipeline_layout places every stage's layers already"));
  CHECK_THROWS_WITH(io::parse_parallel_layout("pp=2,pipeline_layout=Et|tL,pipeline_layout=Et|tL"),
                    Contains("\"pipeline_layout\" is given twice"));
}

TEST_CASE("a stated pipeline layout prices each stage's own layers, the busiest binding", "[model][parallel]") {
  auto shape = shapes::deepseek_v3;  // 61 layers, one prediction module
  const auto j = test::recipe_job(shape, 4096, 8192, true);
  const auto c = test::h100_like();
  const auto layout = [](const std::string& text) { return io::parse_parallel_layout(text); };
  // The layout the default split gives stage by stage prices the same step, to the bit, as the stated ends do.
  const auto stated = price(j, c, layout("tp=2,pp=8,dp=64,sp=on,ep=64,zero=1,pipeline_layout=Et|(tt|)*30mL"));
  const auto ends = price(j, c,
                          layout("tp=2,pp=8,vpp=4,dp=64,sp=on,ep=64,zero=1,first_stage_layers=7,"
                                 "last_stage_layers=6"));
  CHECK((stated.stages.first == 7 && stated.stages.middle == 8 && stated.stages.last == 6));
  CHECK((stated.stages.middle_fewest == 8 && ends.stages.middle_fewest == 8));
  CHECK(stated.step.value() == ends.step.value());
  CHECK(stated.device_bytes.value() == ends.device_bytes.value());
  // Uneven middle stages are priced at the fullest: one stage of 9 layers (a chunk of 3) binds the step where
  // the even split's middle stages hold 8.
  const std::string uneven = "Et|tt|ttt|tt|tt|tt|t|tt|(tt|)*23mL";
  const auto counts = layers_per_rank(parse_pipeline_layout(uneven), 8);
  REQUIRE(counts == std::vector<std::size_t>{7, 8, 9, 8, 8, 8, 7, 6});
  const auto busy = price(j, c, layout("tp=2,pp=8,dp=64,sp=on,ep=64,zero=1,pipeline_layout=" + uneven));
  CHECK((busy.stages.middle == 9 && busy.stages.middle_fewest == 7));  // ranks 1 to 6 hold 8, 9, 8, 8, 8, 7
  CHECK(busy.layers_per_stage == 9);
  CHECK(busy.step > stated.step);
  // What the model cannot run is refused where it is priced, naming the key.
  CHECK_THROWS_WITH(price(j, c, layout("tp=2,pp=8,dp=64,sp=on,ep=64,zero=1,pipeline_layout=Et|(tt|)*29ttmL")),
                    Catch::Contains("pipeline_layout: its 31 chunks do not split over pp=8"));
  auto no_mtp = j;
  no_mtp.shape.mtp_layers = 0;
  CHECK_THROWS_WITH(price(no_mtp, c, layout("tp=2,pp=8,dp=64,sp=on,ep=64,zero=1,pipeline_layout=Et|(tt|)*30mL")),
                    Catch::Contains("places 1 prediction modules (m), and the model has 0"));
  CHECK_THROWS_WITH(price(j, c, layout("tp=2,dp=512,sp=on,ep=64,zero=1,pipeline_layout=Et*61mL")),
                    Catch::Contains("pipeline_layout: a layout without pipeline stages (pp=1)"));
}

TEST_CASE("a layout that moves a layer off the logits' stage binds on the middle one it lands on",
          "[model][parallel]") {
  // Megatron-Bridge's Llama 3 70B layout for 8 H100 stages: rank 3 holds 11 layers, the last 9 beside the logits.
  const auto j = test::recipe_job(shapes::llama3_70b, 8192, 256, true);
  const auto c = test::h100_like();
  const auto even = price(j, c, io::parse_parallel_layout("tp=4,pp=8,vpp=5,dp=2,sp=on,zero=1"));
  const auto moved = price(
      j, c, io::parse_parallel_layout("tp=4,pp=8,dp=2,sp=on,zero=1,pipeline_layout=Et*2|(t*2|)*34,t*3|(t*2|)*3,tL"));
  CHECK((even.stages.first == 10 && even.stages.middle == 10 && even.stages.last == 10 && even.last_binds));
  CHECK((moved.stages.first == 10 && moved.stages.middle == 11 && moved.stages.last == 9));
  CHECK((moved.stages.middle_fewest == 10 && even.stages.middle_fewest == 10));
  // The logits of a 128,256-token vocabulary (and their loss) cost more than a layer of 70B's and less than two:
  // the last stage, 10 layers and the logits, bound the even split; the moved one binds on the stage of 11.
  CHECK(!moved.last_binds);
  CHECK(moved.layers_per_stage == 11);
  CHECK(moved.step < even.step);
}

}  // namespace model_pipeline_layout_test
