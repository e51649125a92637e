#pragma once
//! \file
//! error_feedback<C>: what C loses in one call is added to the next call's
//! input (Seide et al., 2014; Karimireddy et al., 2019), so a biased
//! compressor (sign, top-k, int4) still converges: over many steps the
//! receiver gets everything, late. Wrap the whole chain, not a stage of it:
//! `error_feedback<chain<topk<>, int8>>`. A codec with a member
//! `encode_with_feedback(in, error, out)` (the quantizers, sign) does it in one
//! pass over memory instead of three; the bytes are the same. An input the
//! codec refuses clears the carried error, which it may have half updated.

#include <span>
#include <string>
#include <vector>

#include <trinity/compress/traits.hpp>
#include <trinity/compress/compressor.hpp>
#include <trinity/error.hpp>

namespace trinity::compress {

template <class C>
class error_feedback {
  static_assert(diagnose_compressor<C>(), "trinity: error_feedback<C> wraps a Compressor");
  static_assert(!C::traits.error.lossless(),
                "trinity: error_feedback<C> around a lossless codec feeds back nothing. Fix: use the codec alone.");
  static_assert(!C::traits.own_error_feedback,
                "trinity: this compressor already feeds its error back (dgc's momentum correction, powersgd's "
                "residual); wrapping it in error_feedback<> would count the error twice. Fix: use it alone.");

 public:
  using compressor_concept = compressor_tag;
  static constexpr bool is_error_feedback = true;
  static constexpr compressor_traits traits = [] {
    compressor_traits t = C::traits;
    t.role = role::values;  // floats in, a frame out, whatever C's role inside
    t.stateful = true;
    t.own_error_feedback = true;
    return t;
  }();

  error_feedback() = default;
  explicit error_feedback(C inner) : inner_(std::move(inner)) {}

  //! Encodes input + carried error; carries what this call lost.
  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    if (error_.size() != in.size()) {
      if (!error_.empty())
        throw invalid_input("input", std::to_string(in.size()) + " elements after " + std::to_string(error_.size()) +
                                         " in earlier steps; use one error_feedback per tensor, or call reset()");
      error_.assign(in.size(), 0.0f);
    }
    try {
      if constexpr (requires { inner_.encode_with_feedback(in, std::span<float>(error_), out); }) {
        // One pass: the codec adds the error on the way in and writes what it lost back over it.
        inner_.encode_with_feedback(in, std::span<float>(error_), out);
      } else {
        corrected_.resize(in.size());
        for (std::size_t i = 0; i < in.size(); ++i) corrected_[i] = in[i] + error_[i];
        inner_.encode(corrected_, out, error_);
      }
    } catch (...) {
      // A refused input (NaN, an overflow) may have left the carried error half updated: start it afresh
      // rather than feed a mix of two steps into the next.
      error_.clear();
      throw;
    }
    if (!residual.empty()) {
      if (residual.size() != in.size()) throw invalid_input("residual", "must have the input's size, or be empty");
      std::copy(error_.begin(), error_.end(), residual.begin());
    }
  }

  [[nodiscard]] std::span<const float> carried_error() const noexcept { return error_; }
  void reset() noexcept { error_.clear(); }
  [[nodiscard]] C& inner() noexcept { return inner_; }

 private:
  C inner_{};
  std::vector<float> error_, corrected_;
};

}  // namespace trinity::compress
