#pragma once
//! \file
//! A rag-serve workload's JSON reader: the corpus and its index, the recall asked and its measured curve, the
//! query rate, and the LLM that answers; every wrong value of the LLM in one message. workloads/rag_serve.hpp
//! plans what it reads.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <trinity/field_problems.hpp>
#include <trinity/io/json_object.hpp>
#include <trinity/io/workload.hpp>
#include <trinity/plan/rag_workload.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::io::detail {

inline constexpr key rag_keys[] = {{"name", required},
                                   {"type", required},
                                   {"corpus_vectors", required},
                                   {"dimension", required},
                                   {"index"},
                                   {"lists"},
                                   {"pq_bytes"},
                                   {"rerank"},
                                   {"recall_target"},
                                   {"recall_curve"},
                                   {"queries_per_second", required},
                                   {"top_k"},
                                   {"chunk_tokens", required},
                                   {"probe_skew"},
                                   {"llm", required}};
inline constexpr key rag_llm_keys[] = {{"model"},
                                       {"layers"},
                                       {"hidden"},
                                       {"ffn_hidden"},
                                       {"heads"},
                                       {"kv_heads"},
                                       {"vocabulary"},
                                       {"gated_mlp"},
                                       {"tied_embeddings"},
                                       {"head_dim"},
                                       {"prompt_tokens", required},
                                       {"output_tokens", required},
                                       {"ttft_slo"},
                                       {"tpot_slo"},
                                       {"precision"},
                                       {"prefill_efficiency"}};
inline constexpr key recall_point_keys[] = {{"probe_share", required}, {"recall", required}};

inline plan::serving_workload read_rag_llm(const object& parent, const std::string& name, plan::assumptions& assumed) {
  const object o(parent.at("llm"), "llm", rag_llm_keys, "the LLM that answers");
  plan::serving_workload w;
  w.name = name + " (LLM)";
  field_problems each;  // every wrong value in one message
  each([&] {
    w.shape = read_shape(o, &assumed);
    if (w.shape.moe()) fail("llm.model", "is a mixture of experts; the serving model prices dense models only");
  });
  each([&] { w.prompt_tokens = o.number("prompt_tokens"); });
  each([&] { w.output_tokens = o.number("output_tokens"); });
  // An objective left out is none: the plan judges what it was given and lists what it took.
  read_objectives(o, {{"ttft_slo", &w.ttft_slo}, {"tpot_slo", &w.tpot_slo}}, assumed, each);
  if (o.has("prefill_efficiency")) each([&] { w.prefill_efficiency = o.positive_number("prefill_efficiency", 1); });
  if (o.has("precision"))
    each([&] { w.precision = precision_name(o, "precision"); });
  else
    plan::assume(assumed, "llm.precision", w.precision);
  each.raise();
  // Retrieved chunks differ from query to query: no prefix reuse is priced.
  w.hit_rate = plan::no_prefix_reuse();
  w.hit_rate_bound = 0;
  return w;
}

inline plan::rag_workload read_rag(const json& j, const plan::system& s) {
  const object o(j, "", rag_keys, "a rag-serve workload");
  plan::rag_workload w;
  w.name = o.text("name");
  w.corpus_vectors = o.whole_number("corpus_vectors", 1, 1e15);
  w.dimension = o.count("dimension", 65536);
  if (o.has("index")) {
    static constexpr std::string_view kinds[] = {"ivf-flat", "ivf-pq", "hnsw", "flat"};
    w.index = choice(o.at("index"), "index", kinds);
  } else {
    plan::assume(w.assumed, "index", w.index);
  }
  if (o.has("lists"))
    w.lists = o.count("lists", std::uint64_t{1} << 32, 1);
  else if (w.index != "flat" && !w.graph() && w.corpus_vectors > 0 && w.corpus_vectors <= 1e13)
    plan::assume(w.assumed, "lists", w.list_count());
  if (o.has("pq_bytes"))
    w.pq_bytes = o.count("pq_bytes", 65536, 1);
  else if (w.product_quantized())
    plan::assume(w.assumed, "pq_bytes", w.code_size());
  o.get("recall_target", w.recall_target, w.assumed);
  if (o.has("recall_curve") && w.graph())
    fail("recall_curve",
         "is recall by the share of IVF lists probed; an hnsw index reads the curve measured by ef "
         "(bench/results/hnsw-recall-ci.json). Fix: drop recall_curve, or index ivf-flat");
  if (w.graph()) {
    plan::assume(w.assumed, "recall_curve", "measured by ef (bench/results/hnsw-recall-ci.json, SYNTHETIC vectors)");
  } else if (o.has("recall_curve")) {
    w.recall_curve.clear();
    for_each(
        o.at("recall_curve"), "recall_curve",
        [&](const json& e, const std::string& at) {
          const object p(e, at, recall_point_keys, "a measured recall point");
          w.recall_curve.push_back({p.number("probe_share"), p.number("recall")});
        },
        4096);
  } else if (w.product_quantized()) {
    w.recall_curve = plan::measured_ivf_pq_recall();
    plan::assume(w.assumed, "recall_curve",
                 "measured (bench/results/ivf-recall-ci.json's ivf/pq-recall, SYNTHETIC vectors)");
  } else {
    plan::assume(w.assumed, "recall_curve", "measured (bench/results/ivf-recall-ci.json, SYNTHETIC vectors)");
  }
  w.queries_per_second = o.number("queries_per_second");
  o.get("top_k", w.top_k, w.assumed);
  if (o.has("rerank"))
    w.rerank = o.count("rerank", 100000, 1);
  else if (w.product_quantized())
    plan::assume(w.assumed, "rerank", w.rerank_count());
  w.chunk_tokens = o.number("chunk_tokens");
  o.get("probe_skew", w.probe_skew, w.assumed);
  w.llm = read_rag_llm(o, w.name, w.assumed);
  return validated(std::move(w), s);
}

}  // namespace trinity::io::detail
