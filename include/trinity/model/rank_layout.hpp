#pragma once
//! \file
//! rank_layout: the order of a job's ranks as one (shape, stride) object, as CuTe writes a layout. A rank's
//! coordinate along each axis times that axis's stride, summed, is the rank. A parallel layout's ranks have the
//! axes tensor, context, data and pipeline (rank_axis), shape (tp, cp, dp, pp) and compact strides
//! (1, tp, tp·cp, tp·cp·dp): Megatron-Core's default order, tensor innermost and the pipeline outermost. A
//! mixture's expert groups fold a stage's tp·cp·dp ranks into a second layout (expert_axis): expert tensor,
//! expert and expert data, shape (etp, ep, tp·cp·dp / (ep·etp)). model::rank_layout_of and expert_fold
//! (model/parallel_layout.hpp) build both; the step model reads a group's span from them, and
//! parallel::groups_of (so the trainer) its groups. A new order is a new pair of shape and strides.

#include <array>
#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

namespace trinity::model {

//! The axes of a parallel layout's ranks, innermost first.
enum class rank_axis : std::size_t { tensor, context, data, pipeline };
//! The axes of a stage's ranks regrouped for a mixture's experts (Megatron-Core's folding), innermost first.
enum class expert_axis : std::size_t { expert_tensor, expert, expert_data };

template <class Axis, std::size_t N>
struct rank_layout {
  std::array<std::size_t, N> shape{};   //!< the ranks along each axis
  std::array<std::size_t, N> stride{};  //!< how far apart two neighbours along each axis are

  //! Shape `s` with strides packed in axis order, the first axis innermost (CuTe's column-major compact layout).
  [[nodiscard]] static constexpr rank_layout compact(const std::array<std::size_t, N>& s) noexcept {
    rank_layout l{s, {}};
    std::size_t step = 1;
    for (std::size_t k = 0; k < N; ++k) l.stride[k] = step, step *= s[k];
    return l;
  }
  [[nodiscard]] constexpr std::size_t size() const noexcept {
    std::size_t n = 1;
    for (const auto s : shape) n *= s;
    return n;
  }
  [[nodiscard]] constexpr std::size_t extent(Axis a) const noexcept { return shape[index(a)]; }
  //! The rank at a coordinate.
  [[nodiscard]] constexpr std::size_t operator()(const std::array<std::size_t, N>& coordinate) const noexcept {
    std::size_t r = 0;
    for (std::size_t k = 0; k < N; ++k) r += coordinate[k] * stride[k];
    return r;
  }
  //! A rank's coordinate along each axis.
  [[nodiscard]] constexpr std::array<std::size_t, N> coordinate(std::size_t rank) const noexcept {
    std::array<std::size_t, N> c{};
    for (std::size_t k = 0; k < N; ++k) c[k] = rank / stride[k] % shape[k];
    return c;
  }
  //! How many consecutive ranks hold a group along `a` and the axes inside it whole: a group talks over the
  //! scale-up domain where this fits it (compact layouts).
  [[nodiscard]] constexpr std::size_t span(Axis a) const noexcept { return stride[index(a)] * shape[index(a)]; }
  //! The ranks that differ from `rank` along the axes given and no other, the first axis given innermost.
  [[nodiscard]] std::vector<int> along(std::size_t rank, std::initializer_list<Axis> axes) const {
    auto c = coordinate(rank);
    for (const auto a : axes) c[index(a)] = 0;
    std::vector<std::size_t> ranks{(*this)(c)};
    for (const auto a : axes) {
      std::vector<std::size_t> wider;
      wider.reserve(ranks.size() * extent(a));
      for (std::size_t k = 0; k < extent(a); ++k)
        for (const auto r : ranks) wider.push_back(r + k * stride[index(a)]);
      ranks = std::move(wider);
    }
    std::vector<int> out;
    out.reserve(ranks.size());
    for (const auto r : ranks) out.push_back(static_cast<int>(r));
    return out;
  }

 private:
  static constexpr std::size_t index(Axis a) noexcept { return static_cast<std::size_t>(a); }
};

//! A parallel layout's ranks: (tp, cp, dp, pp) over (tensor, context, data, pipeline).
using parallel_ranks = rank_layout<rank_axis, 4>;
//! A stage's ranks regrouped for the experts: (etp, ep, the rest) over (expert tensor, expert, expert data).
using expert_ranks = rank_layout<expert_axis, 3>;

}  // namespace trinity::model
