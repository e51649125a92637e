#pragma once
//! \file
//! The CXL report's case studies (§5.2, L1596-1661) as stated-input reproductions: each phase the report
//! times, priced by the library's own models with the pool reached over CXL (the gb200-nvl72-cxl preset's
//! cxl-capacity tier: 240 ns, 128 GB/s) and over RDMA (rdma_pool_access: 2 µs, one 400G NIC's 50 GB/s), beside
//! the speed-up the report measured. The inputs are public workloads' sizes, named where they are built below;
//! nothing is tuned to the report's figures. Its prototype (a Vortex soft GPU and RISC-V hosts, L1567-1584) is
//! not a system trinity has figures for, so what is compared is the ratio, CXL over RDMA, for the same work.

#include <algorithm>
#include <string>
#include <vector>

#include <trinity/model/transformer.hpp>
#include <trinity/plan/embedding_serve.hpp>
#include <trinity/plan/rag_serve.hpp>
#include <trinity/plan/system.hpp>

namespace trinity::plan {

struct case_study_row {
  std::string phase;
  double reported = 0;      //!< the report's speed-up, CXL over RDMA
  std::string reported_at;  //!< where the report says it
  double predicted = 0;     //!< trinity's: the phase's time over RDMA / over CXL
  std::string priced;       //!< what trinity priced
};

//! The recipe-recommendation RAG case's corpus as public sizes give it: Recipe1M+'s 1,029,720 recipes (Marín et al.,
//! TPAMI 2019), one CLIP ViT-B/32 embedding each, 512 dimensions (Radford et al., 2021); IVF-Flat at the default
//! recall curve's 0.9, or the exact scan. The LLM that answers is not named in the report: Llama-3-8B stands in.
inline rag_workload recipe_rag(const std::string& index) {
  auto w = presets::rag_serve();
  w.name = "recipe1m-clip";
  w.corpus_vectors = 1029720;
  w.dimension = 512;
  w.index = index;
  return w;
}

namespace detail {

//! The fewest probed lists that reach the workload's recall target (all of them for a flat index).
inline std::size_t nprobe_for(const rag_workload& w) {
  const std::size_t L = w.list_count();
  std::size_t n = 1;
  while (n < L &&
         recall_at(w.recall_curve, static_cast<double>(n) / static_cast<double>(L)).value_or(0) < w.recall_target)
    n = std::min(L, 2 * n);
  return n;
}

inline case_study_row rag_search_row(const system& s, const rag_workload& w, const std::string& phase) {
  const rag_plan p{nprobe_for(w), list_home::pooled, 2, 0};
  const auto& pool = s.tiers[2];
  const double ratio =
      search_cost(s, w, p, rdma_pool_access(pool)).time / search_cost(s, w, p, {pool.latency, pool.bandwidth}).time;
  return {phase, 14, "L1609-1611", ratio,
          "one query over " + units::detail::format_number(w.corpus_vectors) + " x " + std::to_string(w.dimension) +
              "-d vectors, " +
              (w.index == "flat"
                   ? std::string("every vector scanned")
                   : "nprobe " + std::to_string(p.nprobe) + " of " + std::to_string(w.list_count()) + " lists") +
              ", the index in the pool"};
}

}  // namespace detail

//! Each phase of the report's RAG and DLRM cases, the report's speed-up beside trinity's.
inline std::vector<case_study_row> cxl_case_studies() {
  const auto s = presets::gb200_nvl72_cxl();
  const auto& pool = s.tiers[2];
  const model::tier_access cxl{pool.latency, pool.bandwidth}, rdma = rdma_pool_access(pool);
  std::vector<case_study_row> rows;
  rows.push_back(detail::rag_search_row(s, recipe_rag("ivf-flat"), "RAG vector search, IVF-Flat at recall 0.9"));
  rows.push_back(detail::rag_search_row(s, recipe_rag("flat"), "RAG vector search, exact scan"));
  // A graph index's walk (HNSW): each vector visited is a dependent random read of one vector.
  const bytes vector = recipe_rag("flat").vector_bytes();
  rows.push_back({"RAG vector search, a graph walk (HNSW)", 14, "L1609-1611",
                  (rdma.latency + vector / rdma.bandwidth) / (cxl.latency + vector / cxl.bandwidth),
                  "each vector visited one dependent read of " + to_string(vector)});
  // The LLM phase: the prototype's GPUs hold no model-sized memory, so the weights stream from the pool each step.
  const auto llm = recipe_rag("flat").llm;
  const bytes weights{2.0 * model::parameters(llm.shape)};
  rows.push_back({"RAG LLM phase", 2.78, "L1609-1611",
                  (rdma.latency + weights / rdma.bandwidth) / (cxl.latency + weights / cxl.bandwidth),
                  "a decode step streaming Llama-3-8B's " + to_string(weights) + " of bf16 weights from the pool"});
  // DLRM: MLPerf's DLRM v2 tables in the pool, no cache.
  const auto d = presets::dlrm_serve();
  const embedding_plan in_pool{list_home::pooled, 2, 0};
  const auto over_cxl = price(s, d, in_pool, cxl), over_rdma = price(s, d, in_pool, rdma);
  rows.push_back({"DLRM tensor initialization", 2.71, "L1659-1661", over_rdma.initialization / over_cxl.initialization,
                  "MLPerf DLRM v2's " + to_string(d.table_bytes()) + " of tables written into the pool"});
  rows.push_back({"DLRM inference", 3.51, "L1659-1661", over_rdma.total.time / over_cxl.total.time,
                  "a batch of " + units::detail::format_number(d.batch) + ": " +
                      units::detail::format_number(over_cxl.traffic.reads[1]) +
                      " rows gathered from the pool, a table at a time, then the dense part"});
  return rows;
}

}  // namespace trinity::plan
