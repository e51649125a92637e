// Where a tensor-parallel rank's slice of a linear layer sits in the layer whole: exact indices on a small layer,
// parity with what column_parallel_linear::load and row_parallel_linear::load cut, and the refusals.
#include <catch2/catch.hpp>

#include <trinity/parallel/tensor_parallel.hpp>
#include <trinity/parallel/tensor_slice.hpp>

#include <cstddef>
#include <vector>

namespace parallel_tensor_slice_test {

using namespace trinity;
using parallel::linear_split;

TEST_CASE("slice_indices: a column slice is a block of W's rows and of b, a row slice W's columns and b whole",
          "[parallel][tensor]") {
  // in 3, out 4: W holds 0..11 (row o at 3o), b 12..15.
  CHECK(parallel::slice_indices(linear_split::column, {.in = 3, .out = 4}, 2, 1) ==
        std::vector<std::size_t>{6, 7, 8, 9, 10, 11, 14, 15});
  // in 4, out 3: W holds 0..11 (row o at 4o), b 12..14; rank 1 of 2 takes columns 2 and 3 of every row.
  CHECK(parallel::slice_indices(linear_split::row, {.in = 4, .out = 3}, 2, 1) ==
        std::vector<std::size_t>{2, 3, 6, 7, 10, 11, 12, 13, 14});
  // Without b (a mixture's experts), W's part alone.
  CHECK(parallel::slice_indices(linear_split::column, {.in = 3, .out = 4, .bias = false}, 2, 1) ==
        std::vector<std::size_t>{6, 7, 8, 9, 10, 11});
  CHECK(parallel::slice_indices(linear_split::row, {.in = 4, .out = 3, .bias = false}, 2, 0) ==
        std::vector<std::size_t>{0, 1, 4, 5, 8, 9});
  // One slice is the layer itself, either way.
  for (const auto kind : {linear_split::column, linear_split::row}) {
    const auto whole = parallel::slice_indices(kind, {.in = 4, .out = 3}, 1, 0);
    REQUIRE(whole.size() == 15);
    for (std::size_t k = 0; k < whole.size(); ++k) CHECK(whole[k] == k);
  }
}

TEST_CASE("slice_indices cuts what the tensor-parallel layers load, and the slices cover the layer",
          "[parallel][tensor]") {
  const std::size_t in = 6, out = 12;
  std::vector<float> w(out * in), b(out), whole;
  for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<float>(k) * 0.5f - 7.0f;
  for (std::size_t o = 0; o < out; ++o) b[o] = 100.0f + static_cast<float>(o);
  whole = w;
  whole.insert(whole.end(), b.begin(), b.end());
  for (const int t : {1, 2, 3}) {
    std::vector<int> column_cover(whole.size(), 0), row_cover(whole.size(), 0);
    for (int tr = 0; tr < t; ++tr) {
      INFO("t = " << t << ", rank " << tr);
      const auto ut = static_cast<std::size_t>(t), utr = static_cast<std::size_t>(tr);
      parallel::column_parallel_linear column(in, out, t, tr);
      column.load(w, b);
      std::vector<float> held(column.weight().begin(), column.weight().end());
      held.insert(held.end(), column.bias().begin(), column.bias().end());
      const auto at_c = parallel::slice_indices(linear_split::column, {.in = in, .out = out}, ut, utr);
      REQUIRE(at_c.size() == held.size());
      for (std::size_t k = 0; k < at_c.size(); ++k) CHECK(whole[at_c[k]] == held[k]);
      for (const auto k : at_c) ++column_cover[k];

      parallel::row_parallel_linear row(in, out, t, tr);
      row.load(w, b);
      held.assign(row.weight().begin(), row.weight().end());
      held.insert(held.end(), row.bias().begin(), row.bias().end());
      const auto at_r = parallel::slice_indices(linear_split::row, {.in = in, .out = out}, ut, utr);
      REQUIRE(at_r.size() == held.size());
      for (std::size_t k = 0; k < at_r.size(); ++k) CHECK(whole[at_r[k]] == held[k]);
      for (const auto k : at_r) ++row_cover[k];
    }
    // Column slices hold every value once; row slices every value of W once and b on each of the t ranks.
    for (std::size_t k = 0; k < whole.size(); ++k) {
      CHECK(column_cover[k] == 1);
      CHECK(row_cover[k] == (k < out * in ? 1 : t));
    }
  }
}

TEST_CASE("slice_indices refuses a degree that does not split the layer, and a rank outside it", "[parallel][tensor]") {
  CHECK_THROWS_WITH(parallel::slice_indices(linear_split::column, {.in = 6, .out = 10}, 4, 0),
                    Catch::Contains("out: 4 tensor-parallel ranks do not split the layer's 10 outputs"));
  CHECK_THROWS_WITH(parallel::slice_indices(linear_split::row, {.in = 6, .out = 10}, 4, 0),
                    Catch::Contains("in: 4 tensor-parallel ranks do not split the layer's 6 inputs"));
  CHECK_THROWS_WITH(parallel::slice_indices(linear_split::row, {.in = 8, .out = 10}, 4, 4),
                    Catch::Contains("rank 4 is not one of 4"));
  CHECK_THROWS_AS(parallel::slice_indices(linear_split::column, {.in = 8, .out = 8}, 0, 0), invalid_input);
}

}  // namespace parallel_tensor_slice_test
