#pragma once
//! \file
//! A gradient reduction chosen at run time (--compress): shard::exact_reduction or a comm::compressed_reduction<Codec>,
//! behind one type so each scheme is compiled once, not once per codec. Every data_parallel takes one of its own, so
//! a compressor's error feedback stays with the layers it was fed by: the dense layers', the router's and the
//! experts' each over their own group.

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <utility>

#include <trinity/comm/group.hpp>

namespace trinity::train {

template <class Comm>
struct any_reduction {
  std::function<void(Comm&, std::size_t, std::span<float>)> all_reduce_fn;
  std::function<void(Comm&, std::size_t, std::span<const float>, std::span<float>)> reduce_scatter_fn;

  template <class Reduction>
  static any_reduction of(Reduction r) {
    auto held = std::make_shared<Reduction>(std::move(r));
    return {[held](Comm& c, std::size_t l, std::span<float> g) { held->all_reduce(c, l, g); },
            [held](Comm& c, std::size_t l, std::span<const float> g, std::span<float> mine) {
              held->reduce_scatter(c, l, g, mine);
            }};
  }
  void all_reduce(Comm& c, std::size_t l, std::span<float> g) { all_reduce_fn(c, l, g); }
  void reduce_scatter(Comm& c, std::size_t l, std::span<const float> g, std::span<float> mine) {
    reduce_scatter_fn(c, l, g, mine);
  }
};

//! A fresh reduction over groups of a `Comm` world, as --compress asks, each time it is called: what a mixture's
//! router and experts reduce through.
template <class Comm>
using group_reductions = std::function<any_reduction<comm::group<Comm>>()>;

}  // namespace trinity::train
