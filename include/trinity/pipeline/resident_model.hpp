#pragma once
//! \file
//! What the curation executor runs: a sample passing through the pipeline,
//! the CPU-bound operators that transform it, and the device-bound models
//! that score (and may drop) it. A model is loaded onto each device that
//! holds it; what it allocates there is its resident footprint, which it
//! states before it loads so that a device's memory budget is charged first
//! and can never be exceeded.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <trinity/units/quantity.hpp>

namespace trinity::pipeline {

//! One sample on its way through the pipeline (a video clip: its encoded bytes, then its features).
struct sample {
  std::uint64_t id = 0;
  std::vector<std::byte> payload;  //!< what the source produced (the encoded clip)
  std::vector<float> features;     //!< what the CPU operators made of it
  double score = 0;                //!< what the models computed (kept, so no kernel's work can be elided)
};

//! A CPU-bound operator (decode, split): runs on any of the executor's CPU workers.
struct cpu_operator {
  std::string name;
  std::function<void(sample&)> run;
};

//! A model as loaded on one device: its kernel, in steps, and the bytes it occupies there.
class resident_model {
 public:
  virtual ~resident_model() = default;
  //! Bytes this copy holds on its device; at most the footprint its stage stated.
  [[nodiscard]] virtual bytes memory() const = 0;
  //! Steps a sample's kernel takes (a captioner's tokens, a scorer's one pass). A device holding several
  //! models interleaves their steps, so each advances while the others do: the device's compute is shared
  //! among the models with work, as kernels resident together on a GPU share its SMs.
  [[nodiscard]] virtual std::size_t steps() const { return 1; }
  //! Runs step `i` (0 <= i < steps()) of the sample's kernel. The last step's result says whether the
  //! sample passes on (true) or this model's filter drops it (false); earlier steps' results are unused.
  virtual bool step(sample& s, std::size_t i) = 0;
  //! The whole kernel, its steps in order.
  bool run(sample& s) {
    bool pass = true;
    for (std::size_t i = 0, n = steps(); i < n; ++i) pass = step(s, i);
    return pass;
  }
};

//! A device-bound operator: a model with a stated footprint, loaded once on each device that holds it.
struct model_operator {
  std::string name;
  bytes footprint{};  //!< charged to a device's budget before load() runs
  std::function<std::unique_ptr<resident_model>()> load;
};

}  // namespace trinity::pipeline
