// train::attention_block, the trainer's attention as a library piece: its forward against the closed formula
// (y = h + softmax(h·hᵀ/√d)·h per head), its backward against finite differences of that formula, the same block
// over context groups of 2 and 3 ranks (comm::thread_world) giving the whole sequence's results, and selective
// recomputation (forget, rebuild) giving the backward bit for bit.
#include <catch2/catch.hpp>

#include <trinity/comm/thread_world.hpp>
#include <trinity/train/attention_block.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

namespace train_attention_block_test {

using namespace trinity;

constexpr std::size_t sequences = 2, tokens = 6, features = 8, head_dim = 4;

// h, sequence-major rows of `features`: small distinct values, so the softmax is far from flat and from one-hot.
std::vector<float> input() {
  std::vector<float> h(sequences * tokens * features);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i) + 0.3));
  return h;
}
std::vector<float> output_delta() {
  std::vector<float> d(sequences * tokens * features);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<float>(std::cos(1.3 * static_cast<double>(i)));
  return d;
}

// The closed formula in double: y = h + softmax(q·kᵀ/√d)·v per sequence and head, q = k = v = the head's slice.
std::vector<double> reference(const std::vector<double>& h) {
  std::vector<double> y(h);
  const auto at = [&](std::size_t s, std::size_t t, std::size_t head, std::size_t e) {
    return (s * tokens + t) * features + head * head_dim + e;
  };
  for (std::size_t s = 0; s < sequences; ++s)
    for (std::size_t head = 0; head < features / head_dim; ++head)
      for (std::size_t i = 0; i < tokens; ++i) {
        std::vector<double> w(tokens);
        double sum = 0;
        for (std::size_t j = 0; j < tokens; ++j) {
          double dot = 0;
          for (std::size_t e = 0; e < head_dim; ++e) dot += h[at(s, i, head, e)] * h[at(s, j, head, e)];
          sum += w[j] = std::exp(dot / std::sqrt(static_cast<double>(head_dim)));
        }
        for (std::size_t e = 0; e < head_dim; ++e)
          for (std::size_t j = 0; j < tokens; ++j) y[at(s, i, head, e)] += w[j] / sum * h[at(s, j, head, e)];
      }
  return y;
}

// Runs the block over a context group of c ranks, each holding tokens/c of every sequence in order, and gathers
// the whole sequence's forward output and input gradient back into sequence-major rows.
struct whole {
  std::vector<float> y, dx;
};
whole over_ranks(int c, bool recompute) {
  const std::size_t share = tokens / static_cast<std::size_t>(c);
  const auto h = input(), delta = output_delta();
  whole out{std::vector<float>(h.size()), std::vector<float>(h.size())};
  comm::thread_world world(c);
  comm::run_ranks(world, [&](comm::thread_communicator& cp) {
    const auto r = static_cast<std::size_t>(cp.rank());
    const auto row = [&](std::size_t s, std::size_t i) { return (s * tokens + r * share + i) * features; };
    std::vector<float> mine, d;
    for (std::size_t s = 0; s < sequences; ++s)
      for (std::size_t i = 0; i < share; ++i) {
        mine.insert(mine.end(), h.begin() + static_cast<long>(row(s, i)),
                    h.begin() + static_cast<long>(row(s, i) + features));
        d.insert(d.end(), delta.begin() + static_cast<long>(row(s, i)),
                 delta.begin() + static_cast<long>(row(s, i) + features));
      }
    train::attention_block block(sequences, share, features, head_dim);
    block.forward(cp, mine);
    if (recompute) {
      block.forget();
      block.rebuild(cp);
    }
    block.backward(cp, d);
    for (std::size_t s = 0; s < sequences; ++s)
      for (std::size_t i = 0; i < share; ++i)
        for (std::size_t f = 0; f < features; ++f) {
          out.y[row(s, i) + f] = mine[(s * share + i) * features + f];
          out.dx[row(s, i) + f] = d[(s * share + i) * features + f];
        }
  });
  return out;
}

TEST_CASE("attention block: the forward is the closed formula, the backward its derivative", "[parallel][train]") {
  const auto h = input(), delta = output_delta();
  const std::vector<double> hd(h.begin(), h.end());
  const auto one = over_ranks(1, false);
  const auto y = reference(hd);
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(one.y[i] == Approx(y[i]).margin(1e-5));
  // dL/dh for L = Σ δ·y, by central differences of the formula: the backward's δ at the input.
  for (const std::size_t i : {std::size_t{0}, std::size_t{13}, std::size_t{47}, std::size_t{50}, std::size_t{95}}) {
    auto up = hd, down = hd;
    up[i] += 1e-5, down[i] -= 1e-5;
    const auto yu = reference(up), yd = reference(down);
    double slope = 0;
    for (std::size_t k = 0; k < yu.size(); ++k) slope += delta[k] * (yu[k] - yd[k]) / 2e-5;
    CHECK(one.dx[i] == Approx(slope).margin(1e-4));
  }
}

TEST_CASE("attention block: a context group of 2 or 3 ranks gives one rank's results", "[parallel][train]") {
  const auto one = over_ranks(1, false);
  for (const int c : {2, 3}) {
    INFO("context group of " << c);
    const auto ring = over_ranks(c, false);
    for (std::size_t i = 0; i < one.y.size(); ++i) {
      CHECK(ring.y[i] == Approx(one.y[i]).margin(1e-6));
      CHECK(ring.dx[i] == Approx(one.dx[i]).margin(1e-6));
    }
  }
}

TEST_CASE("attention block: recomputing the core (forget, rebuild) gives the backward bit for bit",
          "[parallel][train]") {
  for (const int c : {1, 2}) {
    const auto kept = over_ranks(c, false), again = over_ranks(c, true);
    CHECK(kept.dx == again.dx);
    CHECK(kept.y == again.y);
  }
}

TEST_CASE("attention block: a shape or a tensor that does not fit is refused, naming it", "[train]") {
  CHECK_THROWS_WITH(train::attention_block(2, 3, 8, 3), Catch::Contains("head_dim") && Catch::Contains("whole heads"));
  CHECK_THROWS_WITH(train::attention_block(2, 3, 8, 0), Catch::Contains("head_dim"));
  CHECK_THROWS_WITH(train::attention_block(0, 3, 8, 4), Catch::Contains("tokens"));
  train::attention_block block(2, 3, 8, 4);
  comm::thread_world world(1);
  comm::thread_communicator cp(world, 0);
  std::vector<float> short_rows(47);
  CHECK_THROWS_WITH(block.forward(cp, short_rows),
                    Catch::Contains("h: holds 47 values") && Catch::Contains("6 tokens of 8"));
  std::vector<float> rows(48);
  CHECK_THROWS_WITH(block.backward(cp, rows), Catch::Contains("before backward"));
}

}  // namespace train_attention_block_test
