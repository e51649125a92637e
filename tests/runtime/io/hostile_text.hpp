#pragma once
// Mutations of a valid file, as a hostile or damaged one would arrive: flipped, dropped and duplicated bytes. The
// readers' tests feed them in and hold every outcome to a value or an invalid_input.

#include <cstddef>
#include <random>
#include <string>

namespace trinity::test {

//! `text` after `edits` random edits drawn from `rng`; never empty.
inline std::string mutated(std::string text, std::mt19937& rng, int edits) {
  for (int k = 0; k < edits; ++k) {
    const std::size_t at = rng() % text.size();
    switch (rng() % 3) {
      case 0:
        text[at] = static_cast<char>(rng() % 256);
        break;
      case 1:
        text.erase(at, 1 + rng() % 3);
        break;
      default:
        text.insert(at, text.substr(at, 1 + rng() % 8));
        break;
    }
    if (text.empty()) text = "{";
  }
  return text;
}

}  // namespace trinity::test
