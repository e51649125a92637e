#pragma once
// The small trainer config the tests under tests/runtime/train/ run: four layers (6 inputs, 16 wide, 3 outputs), a
// global batch of 8 samples, one pipeline stage unless a test says otherwise.

#include <trinity/train/config.hpp>

namespace trinity::test {

inline train::config small_trainer() {
  train::config cfg;
  cfg.inputs = 6;
  cfg.width = 16;
  cfg.hidden_layers = 3;
  cfg.outputs = 3;
  cfg.batch = 8;
  return cfg;
}

}  // namespace trinity::test
