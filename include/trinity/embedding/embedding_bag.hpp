#pragma once
//! \file
//! Embedding-bag lookups, as PyTorch's nn.EmbeddingBag and FBGEMM's table-batched kernels take them: a batch of
//! bags, bag b the rows indices[offsets[b] .. offsets[b + 1]) of one table, pooled into one output row by sum or
//! mean. The rows are summed in the order the indices give them, in fp32, so any table that returns the same
//! rows (a tiered one, cached or not) gives the same bits.
//!
//!   embedding::bag_batch batch{indices, offsets};   // offsets: bags + 1 of them, from 0 to indices.size()
//!   embedding::embedding_bag(table, 64, batch, embedding::pooling::sum, out);   // out: bags x 64

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <trinity/embedding/detail/add_rows.hpp>
#include <trinity/error.hpp>

namespace trinity::embedding {

enum class pooling { sum, mean };

//! A batch of bags in compressed form: bag b is indices[offsets[b] .. offsets[b + 1]).
struct bag_batch {
  std::span<const std::uint64_t> indices;
  std::span<const std::size_t> offsets;

  [[nodiscard]] std::size_t bags() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
};

//! Throws invalid_input naming the field unless the batch is well formed for a table of `rows` rows: offsets
//! start at 0, never fall, end at indices.size(), and every index names a row.
inline void validate(const bag_batch& b, std::size_t rows) {
  trinity::detail::require(
      !b.offsets.empty() && b.offsets.front() == 0 && b.offsets.back() == b.indices.size(), "offsets",
      "must run from 0 to the " + std::to_string(b.indices.size()) + " indices, one more than the bags");
  for (std::size_t i = 1; i < b.offsets.size(); ++i)
    trinity::detail::require(b.offsets[i] >= b.offsets[i - 1], "offsets", [&] {
      return "fall at bag " + std::to_string(i - 1) + "; a bag cannot end before it starts";
    });
  for (std::size_t i = 0; i < b.indices.size(); ++i)
    trinity::detail::require(b.indices[i] < rows, "indices", [&] {
      return "index " + std::to_string(b.indices[i]) + " at " + std::to_string(i) + " is past the table's " +
             std::to_string(rows) + " rows";
    });
}

namespace detail {
inline void mean_of(pooling p, float* o, std::size_t n, std::size_t dim) {
  if (p == pooling::mean && n > 0)
    for (std::size_t k = 0; k < dim; ++k) o[k] /= static_cast<float>(n);
}
}  // namespace detail

//! Pools each bag's rows, as `row(i)` returns them (a span of `dim` floats), into out (bags × dim). row() is called
//! once a lookup, in the indices' order, and its row added before the next is looked up: a cached table may move
//! a row it returned when it looks up the next.
template <class Row>
void pool_bags(const bag_batch& b, std::size_t dim, pooling p, std::span<float> out, Row&& row) {
  trinity::detail::require(out.size() == b.bags() * dim, "out", "must hold bags x dim floats");
  const auto set = trinity::detail::best_isa();
  for (std::size_t bag = 0; bag < b.bags(); ++bag) {
    float* o = out.data() + bag * dim;
    for (std::size_t k = 0; k < dim; ++k) o[k] = 0.0f;
    for (std::size_t i = b.offsets[bag]; i < b.offsets[bag + 1]; ++i)
      detail::add_row(set, o, row(b.indices[i]).data(), dim);
    detail::mean_of(p, o, b.offsets[bag + 1] - b.offsets[bag], dim);
  }
}

//! The plain gather-and-pool over a dense row-major table of rows × dim floats. Its rows stay where they are, so a
//! bag's are summed together, a chunk of the output held in registers (detail/add_rows.hpp): each row read once,
//! each output written once, the same bits as pool_bags.
inline void embedding_bag(std::span<const float> table, std::size_t dim, const bag_batch& b, pooling p,
                          std::span<float> out) {
  trinity::detail::require(dim >= 1 && table.size() % dim == 0, "table", "must be whole rows of dim floats");
  validate(b, table.size() / dim);
  trinity::detail::require(out.size() == b.bags() * dim, "out", "must hold bags x dim floats");
  const auto set = trinity::detail::best_isa();
  std::vector<const float*> rows;
  for (std::size_t bag = 0; bag < b.bags(); ++bag) {
    float* o = out.data() + bag * dim;
    rows.clear();
    for (std::size_t i = b.offsets[bag]; i < b.offsets[bag + 1]; ++i) rows.push_back(table.data() + b.indices[i] * dim);
    detail::sum_rows(set, rows.data(), rows.size(), dim, o);
    detail::mean_of(p, o, rows.size(), dim);
  }
}

}  // namespace trinity::embedding
