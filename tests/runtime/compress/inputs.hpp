#pragma once
// The input classes every compressor must round-trip within its bound:
// random, constant, zero, denormal and empty. (NaN and infinity have their own test.)

#include <cfloat>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace trinity::test {

struct named_input {
  std::string name;
  std::vector<float> values;
};

inline std::vector<float> normal_floats(std::size_t n, unsigned seed = 7, float sigma = 1.0f) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(g);
  return v;
}

inline std::vector<named_input> input_classes() {
  std::vector<named_input> in;
  in.push_back({"random normal", normal_floats(5003)});
  in.push_back({"random, wide range", [] {
                  auto v = normal_floats(4099, 11);
                  for (std::size_t i = 0; i < v.size(); ++i) v[i] *= static_cast<float>(1 << (i % 20));
                  return v;
                }()});
  in.push_back({"constant", std::vector<float>(3001, 0.75f)});
  in.push_back({"zero", std::vector<float>(2048, 0.0f)});
  in.push_back({"denormal", [] {
                  std::vector<float> v(1031);
                  for (std::size_t i = 0; i < v.size(); ++i)
                    v[i] = (i % 3 == 0 ? -1.0f : 1.0f) * FLT_TRUE_MIN * static_cast<float>(1 + i % 997);
                  return v;
                }()});
  in.push_back({"empty", {}});
  in.push_back({"one element", {3.25f}});
  return in;
}

}  // namespace trinity::test
