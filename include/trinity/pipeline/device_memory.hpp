#pragma once
//! \file
//! A device's memory budget, charged before anything is loaded onto it: the
//! co-resident models' stated footprints together never pass the budget, so
//! a placement that would overcommit a device is refused before it runs.

#include <cstddef>
#include <string>
#include <vector>

#include <trinity/error.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::pipeline {

class device_memory {
 public:
  device_memory(std::string device, bytes budget) : device_(std::move(device)), budget_(budget) {
    trinity::detail::require(budget.value() >= 0, device_ + ".memory", "must not be negative");
  }

  //! Charges `what` its footprint, or refuses, naming what the device already holds.
  void charge(const std::string& what, bytes footprint) {
    trinity::detail::require(footprint.value() >= 0, what + ".footprint", "must not be negative");
    if (used_ + footprint > budget_) {
      std::string held;
      for (const auto& h : held_) held += (held.empty() ? "" : ", ") + h;
      throw invalid_input("placement", device_ + ": " + what + " (" + to_string(footprint) + ") beside " +
                                           (held.empty() ? std::string("nothing") : held) + " (" + to_string(used_) +
                                           ") needs more than its " + to_string(budget_) +
                                           ". Fix: give the device more memory or hold fewer models on it");
    }
    used_ += footprint;
    held_.push_back(what);
  }

  [[nodiscard]] bytes used() const noexcept { return used_; }
  [[nodiscard]] bytes budget() const noexcept { return budget_; }
  [[nodiscard]] const std::vector<std::string>& held() const noexcept { return held_; }

 private:
  std::string device_;
  bytes budget_{};
  bytes used_{};
  std::vector<std::string> held_;
};

}  // namespace trinity::pipeline
