#pragma once
// --compress and --stage/--offload, chosen at run time, to the types the runners are compiled for.

#include <algorithm>
#include <map>
#include <ratio>
#include <string>

#include <trinity/comm/compressed.hpp>
#include <trinity/compress.hpp>
#include <trinity/shard/exact_reduction.hpp>
#include <trinity/shard/schemes.hpp>

#include "train.hpp"

namespace trinity::train {

template <class Reduction, class Comm>
any_reduction<Comm> make_reduction() {
  return any_reduction<Comm>::of(Reduction{});
}

// Catalog names (trinity calibrate lists them) to a gradient reduction: value codecs on the compressed
// ring, sparsifiers and low rank on the gather; the collective feeds the error back itself. ZeRO's stages
// use its reduce-scatter half, DDP the whole all-reduce.
template <class Comm>
any_reduction<Comm> reduction_for(const std::string& name) {
  if (name.empty()) return any_reduction<Comm>::of(shard::exact_reduction{});
  using percent = std::ratio<1, 100>;
  using permille = std::ratio<1, 1000>;
  using ring = comm::compressed_ring;
  using gather = comm::compressed_gather;
  using maker = any_reduction<Comm> (*)();
  static const std::map<std::string, maker> table{
      {"identity", &make_reduction<comm::compressed_reduction<compress::identity, ring>, Comm>},
      {"bf16", &make_reduction<comm::compressed_reduction<compress::bf16, ring>, Comm>},
      {"fp16", &make_reduction<comm::compressed_reduction<compress::fp16, ring>, Comm>},
      {"lz4", &make_reduction<comm::compressed_reduction<compress::lz4<>, ring>, Comm>},
      {"zstd", &make_reduction<comm::compressed_reduction<compress::zstd<1>, ring>, Comm>},
      {"int8-ef", &make_reduction<comm::compressed_reduction<compress::int8, ring>, Comm>},
      {"int4-ef", &make_reduction<comm::compressed_reduction<compress::int4, ring>, Comm>},
      {"qsgd-7", &make_reduction<comm::compressed_reduction<compress::qsgd<7>, ring>, Comm>},
      {"qsgd-127", &make_reduction<comm::compressed_reduction<compress::qsgd<127>, ring>, Comm>},
      {"sign-ef", &make_reduction<comm::compressed_reduction<compress::sign<>, ring>, Comm>},
      {"topk-1%-ef", &make_reduction<comm::compressed_reduction<compress::topk<percent>, gather>, Comm>},
      {"topk-0.1%-ef", &make_reduction<comm::compressed_reduction<compress::topk<permille>, gather>, Comm>},
      {"sampled-topk-1%-ef",
       &make_reduction<comm::compressed_reduction<compress::sampled_topk<percent>, gather>, Comm>},
      {"sampled-topk-0.1%-ef",
       &make_reduction<comm::compressed_reduction<compress::sampled_topk<permille>, gather>, Comm>},
      {"dgc-0.1%", &make_reduction<comm::compressed_reduction<compress::dgc<permille>, gather>, Comm>},
      {"powersgd-4", &make_reduction<comm::compressed_reduction<compress::powersgd<4>, gather>, Comm>},
  };
  const auto it = table.find(name);
  if (it == table.end()) {
    std::string known;
    for (const auto& [k, _] : table) known += (known.empty() ? "" : ", ") + k;
    throw invalid_input("--compress", "\"" + name + "\" cannot compress a gradient all-reduce; choose one of " + known);
  }
  return it->second();
}

// --stage and --offload as one scheme type, handed to `run` (a lambda templated on it): each scheme is
// compiled once per runner.
template <class Run>
int with_scheme(int stage, bool offload, Run run) {
  switch (std::min(stage, 3) * 2 + (offload ? 1 : 0)) {
    case 0:
      return run.template operator()<shard::replicate>();
    case 1:
      return run.template operator()<shard::offload<shard::replicate>>();
    case 2:
      return run.template operator()<shard::zero<1>>();
    case 3:
      return run.template operator()<shard::offload<shard::zero<1>>>();
    case 4:
      return run.template operator()<shard::zero<2>>();
    case 5:
      return run.template operator()<shard::offload<shard::zero<2>>>();
    case 6:
      return run.template operator()<shard::zero<3>>();
    default:
      return run.template operator()<shard::offload<shard::zero<3>>>();
  }
}

}  // namespace trinity::train
