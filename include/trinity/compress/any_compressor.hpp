#pragma once
//! \file
//! any_compressor: one compressor chosen at run time, for the chooser, the
//! calibration step and the command line, where the choice is data. The
//! static types stay the way to compose; this only erases the result.

#include <concepts>
#include <memory>
#include <optional>
#include <type_traits>
#include <variant>
#include <span>
#include <string>
#include <utility>

#include <trinity/compress/frame_buffer.hpp>
#include <trinity/compress/traits.hpp>
#include <trinity/compress/compressor.hpp>

namespace trinity::compress {

class any_compressor {
 public:
  //! A copyable `c` is also the prototype fresh() copies, as it is now: a codec configured at run time (a bit
  //! width, a fraction) stays so configured, and one without a default constructor works. A codec that cannot
  //! be copied (one holding a zstd context) is made fresh by its default constructor.
  template <Compressor C>
  any_compressor(std::string name, C c) : self_(std::make_unique<model<C>>(std::move(name), std::move(c))) {
    static_assert(std::copy_constructible<C> || std::default_initializable<C>,
                  "trinity: any_compressor makes fresh instances of the codec by copying it as handed over, or by "
                  "its default constructor. Fix: make the codec copy-constructible");
  }

  any_compressor(any_compressor&&) noexcept = default;
  any_compressor& operator=(any_compressor&&) noexcept = default;

  void encode(std::span<const float> in, frame_buffer& out, std::span<float> residual = {}) {
    self_->encode(in, out, residual);
  }
  //! The name it was registered under ("topk-1%", "int8-ef").
  [[nodiscard]] const std::string& name() const noexcept { return self_->name; }
  [[nodiscard]] const compressor_traits& traits() const noexcept { return self_->traits(); }
  //! A new instance of the same compressor as it was handed over (its configuration), with none of the state
  //! this one has gathered since.
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
    static constexpr bool copies = std::copy_constructible<C>;
    model(std::string n, C c) : concept_t(std::move(n)), impl(std::move(c)) {
      if constexpr (copies) prototype.emplace(impl);
    }
    void encode(std::span<const float> in, frame_buffer& out, std::span<float> r) override { impl.encode(in, out, r); }
    [[nodiscard]] const compressor_traits& traits() const noexcept override { return C::traits; }
    [[nodiscard]] std::unique_ptr<concept_t> fresh() const override {
      if constexpr (copies)
        return std::make_unique<model>(name, *prototype);
      else
        return std::make_unique<model>(name, C{});
    }
    C impl;
    // As handed over, what fresh() copies (where C can be copied).
    [[no_unique_address]] std::conditional_t<copies, std::optional<C>, std::monostate> prototype;
  };
  explicit any_compressor(std::unique_ptr<concept_t> self) : self_(std::move(self)) {}

  std::unique_ptr<concept_t> self_;
};

}  // namespace trinity::compress
