// train::mlp_pass and train::teacher_task, the reference trainer's perceptron and task as library pieces: the
// backward against central differences of the forward's loss, full recomputation (forget, rebuild) giving the
// backward bit for bit with the ledger's activation peak at peak_floats, the task a pure function of (seed, step,
// sample), and the tensor slices of each layer tiling it.
#include <catch2/catch.hpp>

#include <trinity/shard/ledger.hpp>
#include <trinity/train/mlp.hpp>
#include <trinity/train/teacher_task.hpp>
#include <trinity/train/tensor_slices.hpp>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <vector>

namespace train_mlp_test {

using namespace trinity;

const train::mlp_shape shape{{5, 7, 6, 7, 3}};  // four layers: two column/row pairs
constexpr std::size_t samples = 3;

// The task's samples as the pass's input and the targets.
struct batch {
  std::vector<float> x, y;
};
batch task_batch() {
  const train::teacher_task task(shape.widths.front(), shape.widths.back(), 7);
  batch b{std::vector<float>(samples * task.inputs()), std::vector<float>(samples * task.outputs())};
  for (std::size_t s = 0; s < samples; ++s)
    task.sample(0, s, std::span<float>(b.x).subspan(s * task.inputs(), task.inputs()),
                std::span<float>(b.y).subspan(s * task.outputs(), task.outputs()));
  return b;
}

// Layer l's slice of the flat parameters.
std::span<const float> layer(const std::vector<float>& p, std::size_t l) {
  std::size_t at = 0;
  for (std::size_t k = 0; k < l; ++k) at += shape.layer_size(k);
  return std::span<const float>(p).subspan(at, shape.layer_size(l));
}

// ½‖ŷ − y‖² summed over the batch, from a forward pass.
double loss(const std::vector<float>& p, const batch& b) {
  shard::memory_ledger ledger;
  train::mlp_pass pass(shape, samples, ledger);
  std::copy(b.x.begin(), b.x.end(), pass.input().begin());
  for (std::size_t l = 0; l < shape.layers(); ++l) pass.forward(l, layer(p, l));
  double sum = 0;
  for (std::size_t i = 0; i < b.y.size(); ++i) sum += 0.5 * (pass.output()[i] - b.y[i]) * (pass.output()[i] - b.y[i]);
  return sum;
}

// The gradient by the backward pass, recomputing the first `recomputed` layers in groups of `group`; `peak` gets
// the ledger's activation peak in bytes.
std::vector<float> gradient(const std::vector<float>& p, const batch& b, std::size_t recomputed, std::size_t group,
                            std::size_t& peak) {
  shard::memory_ledger ledger;
  std::vector<float> g(p.size(), 0.0f);
  {
    train::mlp_pass pass(shape, samples, ledger, recomputed, group);
    std::copy(b.x.begin(), b.x.end(), pass.input().begin());
    for (std::size_t l = 0; l < shape.layers(); ++l) {
      pass.forward(l, layer(p, l));
      if (pass.rebuilt(l)) pass.forget(l);  // a rebuilt input lives only while its layer runs
    }
    std::vector<float> delta(pass.output().begin(), pass.output().end());
    for (std::size_t i = 0; i < delta.size(); ++i) delta[i] -= b.y[i];
    // A recomputed group runs again when the backward reaches its last layer, as trinity-train's loop runs it.
    std::vector<bool> rebuilt(shape.layers(), false);
    for (std::size_t l = shape.layers(); l-- > 0;) {
      if (pass.recomputed(l) && !rebuilt[pass.group_first(l)]) {
        pass.rebuild(
            pass.group_first(l), [&](std::size_t k) { return layer(p, k); }, [](std::size_t, std::span<float>) {});
        rebuilt[pass.group_first(l)] = true;
      }
      const auto at = static_cast<std::size_t>(layer(p, l).data() - p.data());
      pass.backward(l, layer(p, l), std::span<float>(g).subspan(at, shape.layer_size(l)), delta);
      pass.rebuilt_done(l);
    }
  }
  peak = ledger.peak(shard::state_kind::activations);
  return g;
}

TEST_CASE("mlp: the backward pass is the derivative of the forward's loss", "[train]") {
  const auto b = task_batch();
  const auto p = train::initial_parameters(shape, 11);
  REQUIRE(p.size() == shape.parameters());
  std::size_t peak = 0;
  const auto g = gradient(p, b, 0, 2, peak);
  for (const std::size_t i : {std::size_t{0}, std::size_t{17}, std::size_t{40}, std::size_t{45}, p.size() - 1}) {
    auto up = p, down = p;
    up[i] += 1e-2f, down[i] -= 1e-2f;
    const double slope = (loss(up, b) - loss(down, b)) / (static_cast<double>(up[i]) - down[i]);
    INFO("parameter " << i);
    CHECK(g[i] == Approx(slope).epsilon(2e-2).margin(1e-4));
  }
}

TEST_CASE("mlp: recomputing layers in groups gives the gradient bit for bit, the peak as peak_floats counts",
          "[train]") {
  const auto b = task_batch();
  const auto p = train::initial_parameters(shape, 11);
  std::size_t kept_peak = 0;
  const auto kept = gradient(p, b, 0, 2, kept_peak);
  CHECK(kept_peak == sizeof(float) * train::mlp_pass::peak_floats(shape, samples, 0));
  for (const auto& [recomputed, group] : {std::pair<std::size_t, std::size_t>{2, 2}, {4, 2}, {4, 4}, {3, 3}}) {
    INFO(recomputed << " layers recomputed in groups of " << group);
    std::size_t peak = 0;
    CHECK(gradient(p, b, recomputed, group, peak) == kept);
    CHECK(peak == sizeof(float) * train::mlp_pass::peak_floats(shape, samples, recomputed, group));
  }
}

TEST_CASE("mlp: a shape or a recomputation that does not fit is refused, naming it", "[train]") {
  shard::memory_ledger ledger;
  const train::mlp_shape one_width{{5}};
  CHECK_THROWS_WITH(train::mlp_pass(one_width, 2, ledger), Catch::Contains("widths"));
  CHECK_THROWS_WITH(train::mlp_pass(shape, 2, ledger, 5), Catch::Contains("recomputed") && Catch::Contains("at most"));
  CHECK_THROWS_WITH(train::mlp_pass(shape, 2, ledger, 2, 0), Catch::Contains("recomputed"));
}

TEST_CASE("teacher task: a sample is a pure function of the seed, the step and its index", "[train]") {
  const train::teacher_task task(4, 2, 3), again(4, 2, 3), other(4, 2, 4);
  std::vector<float> x(4), y(2), x2(4), y2(2);
  task.sample(5, 9, x, y);
  again.sample(4, 1, x2, y2);  // another sample first: no state carries over
  again.sample(5, 9, x2, y2);
  CHECK(x == x2);
  CHECK(y == y2);
  other.sample(5, 9, x2, y2);
  CHECK(x != x2);
  std::vector<float> short_x(3);
  CHECK_THROWS_WITH(task.sample(0, 0, short_x, y), Catch::Contains("x: holds 3 inputs"));
}

TEST_CASE("tensor slices: each layer's slices over t ranks tile it, column layers by outputs, row by inputs",
          "[train]") {
  const train::mlp_shape wide{{4, 6, 4}};
  for (const std::size_t t : {std::size_t{1}, std::size_t{2}}) {
    for (std::size_t l = 0; l < wide.layers(); ++l) {
      std::vector<std::size_t> all;
      for (std::size_t r = 0; r < t; ++r) {
        const auto mine = train::slice_indices(wide, l, t, r);
        all.insert(all.end(), mine.begin(), mine.end());
      }
      // A row-parallel layer's bias is every rank's (each adds it once the partial sums are reduced): the rest once.
      const std::size_t repeated = l % 2 == 1 ? (t - 1) * wide.out(l) : 0;
      CHECK(all.size() == wide.layer_size(l) + repeated);
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      std::vector<std::size_t> whole(wide.layer_size(l));
      std::iota(whole.begin(), whole.end(), std::size_t{0});
      CHECK(all == whole);
    }
  }
  CHECK(train::unsplit_by(wide, 0, 4) == "layer 0's 6 outputs");
  CHECK(train::unsplit_by(wide, 1, 4) == "layer 1's 6 inputs");
  CHECK(train::unsplit_by(wide, 1, 3).empty());
}

}  // namespace train_mlp_test
