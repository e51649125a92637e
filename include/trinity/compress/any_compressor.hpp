#pragma once
//! \file
//! any_compressor: one compressor chosen at run time, for the chooser, the
//! calibration step and the command line, where the choice is data. The
//! static types stay the way to compose; this only erases the result.

#include <memory>
#include <span>
#include <string>
#include <utility>

#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/compressor.hpp>

namespace trinity::compress {

class any_compressor {
 public:
  template <Compressor C>
  any_compressor(std::string name, C c) : self_(std::make_unique<model<C>>(std::move(name), std::move(c))) {}

  any_compressor(any_compressor&&) noexcept = default;
  any_compressor& operator=(any_compressor&&) noexcept = default;

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    self_->encode(in, out, residual);
  }
  //! The name it was registered under ("topk-1%", "int8-ef").
  [[nodiscard]] const std::string& name() const noexcept { return self_->name; }
  [[nodiscard]] const compressor_traits& traits() const noexcept { return self_->traits(); }
  //! A new instance of the same compressor, with none of this one's state.
  [[nodiscard]] any_compressor fresh() const { return any_compressor(self_->fresh()); }

 private:
  struct concept_t {
    explicit concept_t(std::string n) : name(std::move(n)) {}
    virtual ~concept_t() = default;
    virtual void encode(std::span<const float>, frame_buffer&, std::span<float>) = 0;
    [[nodiscard]] virtual const compressor_traits& traits() const noexcept = 0;
    [[nodiscard]] virtual std::unique_ptr<concept_t> fresh() const = 0;
    std::string name;
  };
  template <class C>
  struct model final : concept_t {
    model(std::string n, C c) : concept_t(std::move(n)), impl(std::move(c)) {}
    void encode(std::span<const float> in, frame_buffer& out, std::span<float> r) override { impl.encode(in, out, r); }
    [[nodiscard]] const compressor_traits& traits() const noexcept override { return C::traits; }
    [[nodiscard]] std::unique_ptr<concept_t> fresh() const override { return std::make_unique<model>(name, C{}); }
    C impl;
  };
  explicit any_compressor(std::unique_ptr<concept_t> self) : self_(std::move(self)) {}

  std::unique_ptr<concept_t> self_;
};

}  // namespace trinity::compress
