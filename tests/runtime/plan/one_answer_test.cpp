// One question, one answer (issue 81): the entry points that price the same thing price it alike. On the docs'
// 100 GbE example (two H100 nodes joined by one 100 Gb/s NIC a GPU, Llama 3.2 1B over 16 ranks), the data-parallel
// planner, the layout search and `choose`'s question (plan::choose_reduction_codec) say the same about
// compressing the gradient, and the two planners price the reduction and the step's tokens alike.
#include <catch2/catch.hpp>

#include <trinity/io/system.hpp>
#include <trinity/plan.hpp>
#include <trinity/plan/reduction_choice.hpp>
#include <trinity/workloads/registry.hpp>

#include <string>

namespace plan_one_answer_test {

using namespace trinity;

namespace {
const std::string examples = TRINITY_SOURCE_DIR "/docs/examples/";

plan::system hundred_gbe() { return io::read_system(io::load(examples + "h100s-on-100gbe.json"), examples); }

plan::training_workload llama_on_16(const plan::system& s) {
  return workloads::read_workload(io::load(examples + "llama3.2-1b-on-16.json"), s).as<plan::training_workload>();
}
}  // namespace

TEST_CASE("the data path, the layout search and choose agree on compressing over 100 GbE", "[plan]") {
  const auto s = hundred_gbe();
  const auto w = llama_on_16(s);
  const auto codecs = plan::default_codecs_for(s);

  const auto data = plan::plan_training(s, w, codecs);
  const auto& chosen = data.chosen().plan;
  const auto asked = plan::choose_reduction_codec(s, w, chosen.stage, codecs);
  CHECK(asked.link == "100GbE");  // 16 ranks outgrow the 8-GPU domain: the reduction crosses the NICs
  CHECK(data.codecs[chosen.codec].name == asked.codecs[asked.chosen].name);
  CHECK(asked.compressed());  // int8 on an H100 encodes far faster than 100 Gb/s carries what it saves

  const auto search = plan::plan_parallel(s, w, {.codecs = codecs});
  const auto& l = search.chosen().plan.layout;
  REQUIRE(l.dp == 16);  // a pure data-parallel layout: the same question as the two above
  CHECK(l.tp * l.pp * l.cp == 1);
  const auto same = plan::choose_reduction_codec(s, w, l.zero_stage, codecs);
  CHECK(l.codec == same.codecs[same.chosen].name);
  CHECK(l.codec == asked.codecs[asked.chosen].name);
}

TEST_CASE("the data path prices the global batch and the scale-out link as the layout search does", "[plan]") {
  const auto s = hundred_gbe();
  const auto w = llama_on_16(s);
  const auto codecs = plan::default_codecs_for(s);
  const auto job = plan::job_of(w, 16);
  const auto cluster = plan::cluster_of(s, w);
  // 256 sequences over 16 ranks of one: 16 micro-batches a rank, every token of them computed.
  REQUIRE(w.micro_batches(16) == 16);
  for (int stage = 0; stage <= 3; ++stage)
    for (const auto* name : {"identity", "int8-ef"}) {
      INFO("ZeRO " << stage << ", " << name);
      const auto& codec = plan::gradient_codec(codecs, name);
      std::size_t index = 0;
      while (codecs[index].name != name) ++index;
      const auto data = plan::price(s, w, codec, {index, stage, 0, false});
      CHECK(data.compute_time.value() ==
            Approx(6.0 * w.parameters * 256.0 * 8192.0 / 16.0 / s.device.rate("bf16").value()).epsilon(1e-12));
      CHECK(data.link == "100GbE");
      model::parallel_layout l;
      l.dp = 16, l.zero_stage = stage, l.codec = std::string(name) == "identity" ? "" : name;
      l.overlap = false;
      const auto laid = plan::price(job, cluster, l, codecs);
      // The same gradient, the same link, the same gathers per micro-batch: the same collectives and coding.
      CHECK(data.comm_time.value() == Approx(laid.dp_collectives.value()).epsilon(1e-9));
      CHECK(data.codec_time.value() == Approx(laid.codec.value()).epsilon(1e-9));
      CHECK(data.link_bytes.value() == Approx(laid.dp_bytes.value()).epsilon(1e-9));
    }
}

TEST_CASE("a global batch that does not split evenly is priced on the busiest rank", "[plan]") {
  plan::training_workload w;
  w.batch = 2, w.global_batch = 100;
  CHECK(w.micro_batches(8) == 7);  // 100 sequences over 8 ranks of 2: 6.25 passes, the busiest rank runs 7
  CHECK(w.micro_batches(50) == 1);
  w.global_batch = 0;
  CHECK(w.micro_batches(8) == 1);  // no global batch: one batch a rank
}

}  // namespace plan_one_answer_test
