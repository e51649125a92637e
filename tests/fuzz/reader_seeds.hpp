#pragma once
// Valid (and nearly valid) inputs for the readers' fuzz targets: the project's own example and test files,
// each also cut in half, and inputs the writers make (a trace, vectors, wire frames, a journal, a checkpoint),
// so the search starts inside each reader's happy path.

#include <trinity/comm/partition.hpp>
#include <trinity/shard/checkpoint.hpp>
#include <trinity/shard/checkpoint_manifest.hpp>
#include <trinity/stream/ack_journal.hpp>
#include <trinity/stream/detail/frame.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace trinity::fuzz {

namespace reader_detail {
using bytes = std::vector<std::uint8_t>;

inline bytes file(const std::string& relative) {
  std::ifstream in(std::filesystem::path(TRINITY_SOURCE_DIR) / relative, std::ios::binary);
  return bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
inline bytes text(std::string_view s) { return bytes(s.begin(), s.end()); }
inline void put32(bytes& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
inline void put64(bytes& b, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
inline void putf(bytes& b, float f) {
  std::uint32_t v;
  std::memcpy(&v, &f, 4);
  put32(b, v);
}

// Each file, then each cut at a half and a quarter: a seed the reader refuses is as useful to start from as one
// it takes.
inline std::vector<bytes> files(std::initializer_list<const char*> names) {
  std::vector<bytes> out;
  for (const char* n : names) out.push_back(file(n));
  const std::size_t whole = out.size();
  for (const std::size_t part : {std::size_t{2}, std::size_t{4}})
    for (std::size_t i = 0; i < whole; ++i)
      out.push_back(bytes(out[i].begin(), out[i].begin() + static_cast<std::ptrdiff_t>(out[i].size() / part)));
  return out;
}

inline std::vector<bytes> fvecs() {
  std::vector<bytes> out;
  for (const std::uint32_t dim : {1u, 4u, 16u}) {
    bytes b;
    for (std::uint32_t r = 0; r < 3; ++r) {
      put32(b, dim);
      for (std::uint32_t i = 0; i < dim; ++i) putf(b, 0.25f * static_cast<float>(r + i));
    }
    out.push_back(std::move(b));
  }
  return out;
}

inline std::vector<bytes> stream_frames() {
  using namespace trinity::stream::detail;
  std::vector<bytes> out;
  for (const auto kind : {frame_kind::data, frame_kind::state, frame_kind::hello}) {
    frame_header h;
    h.kind = kind;
    h.producer = 7;
    h.field = {1, 2, 3, 4};
    h.flags = kind == frame_kind::state ? flag_reply_to_hello : 0;
    std::array<std::byte, header_bytes> a{};
    encode(h, a);
    bytes b(header_bytes);
    std::memcpy(b.data(), a.data(), header_bytes);
    if (kind == frame_kind::data) b.insert(b.end(), {1, 2, 3, 4, 5});
    out.push_back(std::move(b));
  }
  // A batch of three samples (2, 0 and 1 bytes) from offset 9.
  frame_header h;
  h.kind = frame_kind::batch;
  h.producer = 7;
  h.field = {9, 3, 0, 0};
  std::array<std::byte, header_bytes> a{};
  encode(h, a);
  bytes b(header_bytes);
  std::memcpy(b.data(), a.data(), header_bytes);
  b.insert(b.end(), {2, 0, 0, 0, 0xaa, 0xbb, 0, 0, 0, 0, 1, 0, 0, 0, 0xcc});
  out.push_back(std::move(b));
  return out;
}

inline std::vector<bytes> journals() {
  std::vector<bytes> out;
  for (const std::uint32_t records : {0u, 1u, 5u}) {
    bytes b = text("TRNJ");
    put32(b, 1);
    std::uint64_t next[2] = {0, 0};
    for (std::uint32_t i = 0; i < records; ++i) {
      const std::uint32_t producer = i % 2;
      const std::uint64_t offset = next[producer]++, tag = 100 + i;
      put32(b, producer);
      put32(b, trinity::stream::detail::journal_record_magic);
      put64(b, offset);
      put64(b, tag);
      put64(b, trinity::stream::detail::journal_check(producer, offset, tag));
    }
    out.push_back(std::move(b));
  }
  return out;
}

// A checkpoint of rank 0 of 2 as shard::save_checkpoint writes it: magic, version, ranks, rank, steps, states
// per parameter, layer sizes, the rank's chunks and their states, an FNV-1a checksum.
inline std::vector<bytes> checkpoints() {
  std::vector<bytes> out;
  for (const std::uint32_t states : {0u, 2u}) {
    bytes b(8);
    std::memcpy(b.data(), trinity::shard::detail::checkpoint_magic, 8);
    put32(b, trinity::shard::detail::checkpoint_version);
    put32(b, 2);
    put32(b, 0);
    put64(b, 3);
    put32(b, states);
    const std::uint64_t sizes[] = {5, 8};
    put32(b, 2);
    for (const auto s : sizes) put64(b, s);
    for (const auto s : sizes)
      for (std::size_t i = 0; i < trinity::comm::partition(static_cast<std::size_t>(s), 2).size(0) * (1 + states); ++i)
        putf(b, 0.5f);
    trinity::shard::detail::fnv1a sum;
    sum.add(reinterpret_cast<const char*>(b.data()), b.size());
    put64(b, sum.h);
    out.push_back(std::move(b));
  }
  out.push_back(bytes(out[1].begin(), out[1].begin() + 40));
  return out;
}
// Manifests as shard::commit_checkpoint writes them (a model in one piece, a pipeline's pieces), and one cut short.
inline std::vector<bytes> manifests() {
  using trinity::shard::checkpoint_manifest;
  std::vector<bytes> out;
  out.push_back(text(trinity::shard::to_text(
      {2, 3, 3, "ranks=2,tp=1,pp=1", {{"rank-0-of-2.ckpt", 412, 0x1234}, {"rank-1-of-2.ckpt", 412, 0xbeef}}})));
  out.push_back(
      text(trinity::shard::to_text(checkpoint_manifest{4,
                                                       7,
                                                       9,
                                                       "ranks=4,tp=1,pp=2",
                                                       {{"stage-0-of-2x1-slice-0-of-1/rank-0-of-2.ckpt", 100, 1},
                                                        {"stage-1-of-2x1-slice-0-of-1/rank-0-of-2.ckpt", 100, 2}}})));
  out.push_back(bytes(out[1].begin(), out[1].begin() + 60));
  return out;
}
}  // namespace reader_detail

//! Seeds for a reader's target (fuzz_reader_<name>); empty for a name that is none.
inline std::vector<std::vector<std::uint8_t>> reader_seed_inputs(std::string_view target) {
  using namespace reader_detail;
  if (target == "reader_system")
    return files({"docs/examples/eight-gb200s-and-a-pool.json", "docs/examples/four-h100-nodes.json",
                  "docs/examples/two-h100-box.json", "docs/examples/small-pool.json", "tests/cli/hostile/system.json"});
  if (target == "reader_workload")
    return files({"docs/examples/llama2-13b-train.json", "docs/examples/gpt3-175b-train.json",
                  "docs/examples/video-dit-train.json", "docs/examples/llama3-8b-chat.json",
                  "docs/examples/doorbell-detector.json", "docs/examples/my-diffusion.json",
                  "docs/examples/traced-diffusion.json", "docs/examples/t2v-curation.json",
                  "docs/examples/wan22-t2v-hetero.json", "docs/examples/llm-13b.json",
                  "docs/examples/qwen3-30b-a3b-fp8-train.json", "docs/examples/gpt-oss-120b-train.json"});
  if (target == "reader_topology")
    return files({"tests/cli/hostile/topology.json", "tests/cli/cascaded_cxl2.json", "tests/cli/cascaded_cxl3.json"});
  if (target == "reader_profile") return files({"tests/cli/profile.json", "tests/cli/hostile/profile.json"});
  if (target == "reader_runs") return files({"bench/published/training-runs.json", "tests/cli/bad-runs.json"});
  if (target == "reader_serving_runs") return files({"bench/published/serving-runs.json"});
  if (target == "reader_attention_kernels") return files({"bench/published/attention-kernels.json"});
  if (target == "reader_manifest") return manifests();
  if (target == "reader_probe") return files({"bench/results/transformer-probe-h100.json"});
  if (target == "reader_layout")
    return {text("tp=2,pp=4,dp=8"),
            text("zero=3,dp=64"),
            text("tp=8,pp=16,vpp=2,cp=2,dp=4,mbs=2,recompute=selective,sp=on,zero=1,offload=on,codec=int8-ef"),
            text("tp=2,pp=16,dp=32,sp=on,ep=64,overlap=on,recompute_modules=mla_up_proj,first_stage_layers=3,"
                 "last_stage_layers=2"),
            text("tp=2,pp=8,dp=64,sp=on,ep=64,pipeline_layout=Et|(tt|)*30mL"),
            text("pp=4,vpp=2,pipeline_layout=E(t*3|)*7tmL"),
            text("tp=4,pp=8,pipeline_layout=Et*2|(t*2|)*34,t*3|(t*2|)*3,tL,sp=on"),
            text("dp=8,zero=3,recompute=full,recompute_layers=5"),
            text("tp=8,pp=4,recompute=full,recompute_layers=2,recompute_method=uniform")};
  if (target == "reader_mooncake") {
    auto whole = file("docs/examples/mooncake_conversation_excerpt.jsonl");
    std::vector<bytes> out;
    std::size_t at = 0;
    for (int lines = 0; lines < 40 && at < whole.size(); ++lines) {
      const auto end = std::find(whole.begin() + static_cast<std::ptrdiff_t>(at), whole.end(), std::uint8_t{'\n'});
      at = static_cast<std::size_t>(end - whole.begin()) + 1;
      if (lines == 0 || lines == 4 || lines == 39)
        out.push_back(bytes(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(std::min(at, whole.size()))));
    }
    return out;
  }
  if (target == "reader_csv_trace")
    return {text("timestamp,row\n0,1\n0.5,2\n1,999\n"), text("3,4\r\n1,5\r\n\r\n2,6\n"), text("timestamp,row\n")};
  if (target == "reader_dlrm_trace")
    return {text("1, 2, 3, 4, 5, 3, 4, 1, 1, 6, 3\n3, 0, 2, 6"), text("24173, 36093,\n10426\n1, 2"), text("7, 8, 9"),
            bytes(16, std::uint8_t{1})};
  if (target == "reader_fvecs") return fvecs();
  if (target == "reader_stream_frame") return stream_frames();
  if (target == "reader_journal") return journals();
  if (target == "reader_checkpoint") return checkpoints();
  return {};
}

}  // namespace trinity::fuzz
