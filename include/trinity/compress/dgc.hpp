#pragma once
//! \file
//! dgc<Density>: Deep Gradient Compression (Lin et al., ICLR 2018) as a
//! stateful sparsifier: momentum correction (accumulate the velocity
//! u = m·u + g into v, and sparsify v rather than g), local accumulation of
//! everything not sent, momentum factor masking (u and v cleared where sent),
//! and the sampled threshold of sampled_topk. The feedback is its own, so it
//! refuses to be wrapped in error_feedback<>. What a values stage after it
//! loses on the kept values goes back into v too.
//!
//! The optimizer on the receiving side applies the sent v directly, without
//! its own momentum: DGC moves momentum to the sender.

#include <cstdint>
#include <ratio>
#include <span>
#include <string>
#include <vector>

#include <trinity/compress/detail/finite.hpp>
#include <trinity/compress/topk.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/opt_in.hpp>
#include <trinity/error.hpp>

namespace trinity::compress {

template <class Density = std::ratio<1, 1000>>
class dgc {
  static_assert(detail::is_density<Density>,
                "trinity: dgc<Density> takes a std::ratio in (0, 1], e.g. std::ratio<1, 1000> to keep 0.1%");

 public:
  using compressor_concept = compressor_tag;
  static constexpr double density = static_cast<double>(Density::num) / static_cast<double>(Density::den);
  static constexpr compressor_traits traits{.name = "dgc",
                                            .wire_codec = codec::sparse,
                                            .role = role::sparsifier,
                                            .error = {error_kind::dropped_below, 0.0},
                                            .stateful = true,
                                            .own_error_feedback = true,
                                            .expected_ratio = 1.0 / (2.0 * density)};

  //! momentum: the optimizer's momentum m (0.9 in the DGC paper), 0 for plain accumulation.
  explicit dgc(double momentum = 0.9) : momentum_(static_cast<float>(momentum)) {
    trinity::detail::require(momentum >= 0.0 && momentum < 1.0, "momentum", "must be in [0, 1)");
  }

  //! Updates u and v with the gradient, and picks from v.
  std::span<const float> select(std::span<const float> gradient, std::vector<std::uint32_t>& idx) {
    if (u_.empty()) {
      u_.assign(gradient.size(), 0.0f);
      v_.assign(gradient.size(), 0.0f);
    } else if (u_.size() != gradient.size()) {
      throw invalid_input("gradient", std::to_string(gradient.size()) + " elements after " + std::to_string(u_.size()) +
                                          " in earlier steps; use one dgc per tensor, or call reset()");
    }
    detail::require_finite(traits.name, gradient);
    for (std::size_t i = 0; i < gradient.size(); ++i) {
      u_[i] = momentum_ * u_[i] + gradient[i];
      v_[i] += u_[i];
    }
    detail::sampled_top(v_, nullptr, detail::keep_count(v_.size(), Density::num, Density::den), idx, kept_, buffers_);
    return v_;
  }

  //! After sending v[idx]: clear what was sent, keep what the value stage lost.
  void settle(std::span<const std::uint32_t> idx, std::span<const float> kept_error) noexcept {
    for (std::size_t i = 0; i < idx.size(); ++i) {
      v_[idx[i]] = kept_error[i];
      u_[idx[i]] = 0.0f;
    }
  }

  void encode(std::span<const float> gradient, frame_buffer& out, std::span<float> residual = {}) {
    detail::encode_sparsifier(*this, gradient, out, residual, idx_, kept_error_);
  }

  //! Forgets the accumulated velocity, e.g. at a new tensor shape.
  void reset() noexcept {
    u_.clear();
    v_.clear();
  }
  //! What has not been sent yet (v).
  [[nodiscard]] std::span<const float> accumulated() const noexcept { return v_; }

 private:
  float momentum_;
  std::vector<float> u_, v_;
  std::vector<std::uint32_t> idx_;
  std::vector<float> kept_, kept_error_;
  detail::sampled_buffers buffers_;
};

}  // namespace trinity::compress
