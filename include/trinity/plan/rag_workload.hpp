#pragma once
//! \file
//! A retrieval-augmented generation workload: the corpus and its index (IVF-Flat, IVF-PQ, an HNSW graph or a
//! flat scan), the recall asked and the measured curve that says what each scan reaches, the query rate, and the
//! LLM that answers with the retrieved chunks; its checks and presets. plan/rag_serve.hpp plans it.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/field_problems.hpp>
#include <trinity/model/named_shapes.hpp>
#include <trinity/plan/detail/measured_curves.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::plan {

//! Recall@k at a share of the lists probed (nprobe / lists), measured on one index.
struct recall_point {
  double probe_share = 0;
  double recall = 0;
  friend bool operator==(const recall_point&, const recall_point&) = default;
};

//! The default recall curve: retrieval::ivf_index on SYNTHETIC clustered vectors (bench/retrieval.cpp's
//! ivf/recall sweep, bench/results/ivf-recall-ci.json). Measure your corpus's with the same sweep.
inline std::vector<recall_point> measured_ivf_recall() {
  std::vector<recall_point> out;
  for (const auto& p : detail::synthetic_ivf_recall) out.push_back({p[0], p[1]});
  return out;
}

namespace detail {
//! Codewords of a product quantizer's part, its code one byte (retrieval::product_quantizer::centroids).
inline constexpr double pq_codewords = 256;
}  // namespace detail

//! What an HNSW walk at `ef` reads, measured (detail::synthetic_hnsw_recall): its recall@10, the vectors it scores
//! and the link lists it reads.
struct hnsw_walk {
  double ef = 0, recall = 0, vectors = 0, lists = 0;
};
inline std::vector<hnsw_walk> measured_hnsw_walks() {
  std::vector<hnsw_walk> out;
  for (const auto& p : detail::synthetic_hnsw_recall) out.push_back({p[0], p[1], p[2], p[3]});
  return out;
}
//! The measured walk at `ef`, which must be one of the curve's.
inline hnsw_walk hnsw_walk_at(std::size_t ef) {
  for (const auto& w : measured_hnsw_walks())
    if (w.ef == static_cast<double>(ef)) return w;
  throw invalid_input("ef", std::to_string(ef) + " is not an ef the HNSW curve measured");
}

//! The default IVF-PQ curve: retrieval::tiered_ivf_pq on the same vectors (bench/retrieval.cpp's ivf/pq-recall
//! sweep), its codes a byte for every pq_dimensions_per_byte dimensions and pq_rerank_per_hit vectors re-ranked a
//! hit: the shape the planner's IVF-PQ defaults take, so the curve holds for them.
inline std::vector<recall_point> measured_ivf_pq_recall() {
  std::vector<recall_point> out;
  for (const auto& p : detail::synthetic_ivf_pq_recall) out.push_back({p[0], p[1]});
  return out;
}

struct rag_workload {
  std::string name;
  double corpus_vectors = 0;  //!< chunks in the corpus, one vector each
  std::size_t dimension = 0;  //!< fp32 values a vector
  //! "ivf-flat" (k-means lists), "ivf-pq" (the lists' vectors as product-quantized codes, the best re-ranked
  //! from the full vectors), "hnsw" (a graph of degree detail::hnsw_m, walked at ef) or "flat" (every vector
  //! scanned: exact)
  std::string index = "ivf-flat";
  std::size_t lists = 0;       //!< IVF lists; 0: 4·√N, the low end of FAISS's guideline (4–16·√N)
  std::size_t pq_bytes = 0;    //!< ivf-pq: bytes of a vector's code (a byte a part); 0: the measured curve's ratio
  std::size_t rerank = 0;      //!< ivf-pq: vectors a query ranks exactly; 0: the measured curve's per hit
  double recall_target = 0.9;  //!< recall@top_k a query must reach
  //! Measured recall@top_k by nprobe / lists; the default is IVF-Flat's (an ivf-pq workload read from JSON takes
  //! measured_ivf_pq_recall(); one built in code sets it).
  std::vector<recall_point> recall_curve = measured_ivf_recall();
  double queries_per_second = 0;  //!< over the whole system
  std::size_t top_k = 10;         //!< chunks retrieved, which join the prompt
  double chunk_tokens = 0;        //!< tokens a chunk adds to the prompt
  double probe_skew = 0;          //!< Zipf exponent of the lists' popularity (0: every list as likely)
  serving_workload llm;           //!< the model, the question's tokens (prompt_tokens), the answer's, objectives
  assumptions assumed = {};

  [[nodiscard]] bool product_quantized() const { return index == "ivf-pq"; }
  [[nodiscard]] bool graph() const { return index == "hnsw"; }
  [[nodiscard]] std::size_t list_count() const {
    if (index == "flat" || graph()) return 1;
    return lists ? lists
                 : std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(4 * std::sqrt(corpus_vectors))));
  }
  //! ivf-pq: a code's bytes (pq_bytes, or a byte every detail::pq_dimensions_per_byte dimensions, at least one).
  [[nodiscard]] std::size_t code_size() const {
    if (!product_quantized()) return 0;
    return pq_bytes ? pq_bytes
                    : std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(static_cast<double>(dimension) /
                                                                                     detail::pq_dimensions_per_byte)));
  }
  //! ivf-pq: the vectors a query re-ranks (rerank, or detail::pq_rerank_per_hit a hit).
  [[nodiscard]] std::size_t rerank_count() const {
    if (!product_quantized()) return 0;
    return rerank ? rerank
                  : static_cast<std::size_t>(std::llround(detail::pq_rerank_per_hit * static_cast<double>(top_k)));
  }
  //! A vector as its list stores it where the list lives: an 8-byte id, its 4-byte squared norm and d fp32 values;
  //! for ivf-pq the norm and the values (its id lives with its code).
  //! hnsw: a node, its 8-byte label, its fp32 values and its link lists (the measured bytes a node at hnsw_m).
  [[nodiscard]] bytes vector_bytes() const {
    if (graph()) return bytes{8.0 + 4.0 * static_cast<double>(dimension) + detail::hnsw_link_bytes_per_node};
    return bytes{(product_quantized() ? 4.0 : 12.0) + 4.0 * static_cast<double>(dimension)};
  }
  //! ivf-pq: a vector's code and id, always in device memory.
  [[nodiscard]] bytes code_bytes() const {
    return product_quantized() ? bytes{8.0 + static_cast<double>(code_size())} : bytes{};
  }
  [[nodiscard]] double list_vectors() const { return corpus_vectors / static_cast<double>(list_count()); }
  [[nodiscard]] bytes list_bytes() const { return list_vectors() * vector_bytes(); }
  //! The centroids, and for ivf-pq its codebooks (256 centroids of every part: 256·d fp32 values).
  [[nodiscard]] bytes centroid_bytes() const {
    if (index == "flat" || graph()) return bytes{};
    return bytes{4.0 * static_cast<double>(dimension) *
                 (static_cast<double>(list_count()) + (product_quantized() ? detail::pq_codewords : 0.0))};
  }
  [[nodiscard]] bytes index_bytes() const {
    return corpus_vectors * (vector_bytes() + code_bytes()) + centroid_bytes();
  }
  //! The LLM's prompt: the question and the retrieved chunks.
  [[nodiscard]] serving_workload answering() const {
    auto w = llm;
    w.prompt_tokens += static_cast<double>(top_k) * chunk_tokens;
    return w;
  }
};

inline void validate(const rag_workload& w, const system& s) {
  trinity::detail::require(!w.name.empty(), "workload.name", "a workload needs a name");
  detail::require_positive(w.corpus_vectors, "workload.corpus_vectors");
  trinity::detail::require(w.corpus_vectors <= 1e13, "workload.corpus_vectors", "at most 1e13 vectors");
  trinity::detail::require(w.dimension >= 1 && w.dimension <= 65536, "workload.dimension",
                           "must be from 1 to 65536 values a vector");
  trinity::detail::require(
      w.index == "ivf-flat" || w.index == "ivf-pq" || w.index == "hnsw" || w.index == "flat", "workload.index",
      "\"" + w.index + "\" is not an index kind the planner prices. Fix: ivf-flat, ivf-pq, hnsw or flat");
  trinity::detail::require(w.index != "flat" || w.lists == 0, "workload.lists",
                           "a flat index has no lists. Fix: drop lists, or index ivf-flat");
  trinity::detail::require(!w.graph() || w.lists == 0, "workload.lists",
                           "an HNSW graph has no lists. Fix: drop lists, or index ivf-flat");
  trinity::detail::require(!w.graph() || w.probe_skew == 0, "workload.probe_skew",
                           "an HNSW plan reads its hot nodes in proportion to their share; node popularity is not "
                           "modelled. Fix: drop probe_skew, or index ivf-flat");
  trinity::detail::require(w.product_quantized() || (w.pq_bytes == 0 && w.rerank == 0),
                           w.pq_bytes ? "workload.pq_bytes" : "workload.rerank",
                           "shapes a product-quantized index. Fix: index ivf-pq, or drop it");
  if (w.product_quantized()) {
    trinity::detail::require(w.code_size() <= w.dimension && w.dimension % w.code_size() == 0, "workload.pq_bytes",
                             std::to_string(w.code_size()) + " parts do not split the " + std::to_string(w.dimension) +
                                 " dimensions evenly. Fix: a divisor of dimension");
    trinity::detail::require(w.rerank_count() >= w.top_k && w.rerank_count() <= 100000, "workload.rerank",
                             "re-ranks from top_k (" + std::to_string(w.top_k) + ") to 100000 vectors a query");
  }
  trinity::detail::require(static_cast<double>(w.list_count()) <= w.corpus_vectors, "workload.lists",
                           "more lists than vectors. Fix: at most corpus_vectors (4·√N is FAISS's low end)");
  trinity::detail::require(w.recall_target > 0 && w.recall_target <= 1, "workload.recall_target",
                           "is a share of the true top_k, above 0 and at most 1");
  trinity::detail::require(!w.recall_curve.empty(), "workload.recall_curve", "needs at least one measured point");
  for (std::size_t i = 0; i < w.recall_curve.size(); ++i) {
    const auto& p = w.recall_curve[i];
    const std::string at = "workload.recall_curve[" + std::to_string(i) + "]";
    trinity::detail::require(p.probe_share > 0 && p.probe_share <= 1, at + ".probe_share",
                             "is nprobe over lists, above 0 and at most 1");
    trinity::detail::require(p.recall >= 0 && p.recall <= 1, at + ".recall", "is a share, from 0 to 1");
    trinity::detail::require(
        i == 0 || (p.probe_share > w.recall_curve[i - 1].probe_share && p.recall >= w.recall_curve[i - 1].recall), at,
        "points go up in probe_share, and recall does not fall as more lists are probed");
  }
  detail::require_positive(w.queries_per_second, "workload.queries_per_second");
  trinity::detail::require(w.top_k >= 1 && w.top_k <= 10000, "workload.top_k", "must be from 1 to 10000 chunks");
  detail::require_non_negative(w.chunk_tokens, "workload.chunk_tokens");
  detail::require_non_negative(w.probe_skew, "workload.probe_skew");
  trinity::detail::require(w.probe_skew <= 4, "workload.probe_skew", "a Zipf exponent of at most 4");
  try {
    validate(w.answering(), s);
  } catch (const invalid_input& e) {
    auto problems = problems_of(e);
    for (auto& q : problems)
      if (q.field.starts_with("workload.")) q.field.insert(9, "llm.");
    fail_together(std::move(problems));
  }
}

namespace presets {

//! A RAG service over 100 million chunks embedded at 1,024 dimensions (a BGE-large-sized embedding), 20 queries a
//! second, the top 10 chunks of 256 tokens each joining a 64-token question, answered by Llama-3-8B in 256 tokens:
//! sizes to plan with, not a measured service. The index is 411 GB in fp32: more than a GPU's memory, so where its
//! lists live is the question the plan answers. Recall target 0.9 at the default measured curve.
inline rag_workload rag_serve() {
  rag_workload w;
  w.name = "rag-serve";
  w.corpus_vectors = 100e6;
  w.dimension = 1024;
  w.queries_per_second = 20;
  w.top_k = 10;
  w.chunk_tokens = 256;
  w.llm.name = "rag-serve (LLM)";
  w.llm.shape = model::shapes::llama3_8b;
  w.llm.prompt_tokens = 64;
  w.llm.output_tokens = 256;
  w.llm.ttft_slo = seconds{2};
  w.llm.tpot_slo = seconds{0.1};
  // Retrieved chunks differ from query to query: no prefix reuse is priced.
  w.llm.hit_rate = no_prefix_reuse();
  w.llm.hit_rate_bound = 0;
  w.llm.precision = "bf16";
  assume(w.assumed, "index", w.index);
  assume(w.assumed, "lists", w.list_count());
  assume(w.assumed, "recall_target", w.recall_target);
  assume(w.assumed, "recall_curve", "measured (bench/results/ivf-recall-ci.json, SYNTHETIC vectors)");
  assume(w.assumed, "probe_skew", w.probe_skew);
  return w;
}

//! The same service over an HNSW graph of the measured curve's degree: a node is its 1,024 fp32 values and its
//! link lists, and a walk reads a few hundred of them at random where an IVF query streams whole lists.
inline rag_workload rag_serve_hnsw() {
  auto w = rag_serve();
  w.name = "rag-serve-hnsw";
  w.index = "hnsw";
  w.assumed = {};
  assume(w.assumed, "index", w.index);
  assume(w.assumed, "recall_target", w.recall_target);
  assume(w.assumed, "recall_curve", "measured by ef (bench/results/hnsw-recall-ci.json, SYNTHETIC vectors)");
  return w;
}

inline std::optional<rag_workload> find_rag(std::string_view name) {
  if (name == "rag-serve") return rag_serve();
  if (name == "rag-serve-hnsw") return rag_serve_hnsw();
  return std::nullopt;
}

}  // namespace presets
}  // namespace trinity::plan
