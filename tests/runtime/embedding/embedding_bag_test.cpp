// Embedding-bag lookups on every instruction set this CPU has: each path's bags equal a plain loop's sum, bit for
// bit, at dimensions that fill whole vectors and that leave tails; and the recorded run beside a plain gather.
#include <catch2/catch.hpp>

#include <trinity/detail/isa.hpp>
#include <trinity/detail/splitmix.hpp>
#include <trinity/embedding/embedding_bag.hpp>
#include <trinity/io/json_object.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace embedding_embedding_bag_test {

using namespace trinity;

TEST_CASE("every instruction set's bags equal a plain loop's sum, bit for bit, tails and empty bags included",
          "[embedding]") {
  using trinity::detail::isa;
  for (const std::size_t dim : {1u, 7u, 8u, 15u, 16u, 17u, 31u, 32u, 33u, 63u, 64u, 65u, 100u, 130u}) {
    CAPTURE(dim);
    const std::size_t rows = 97;
    std::vector<float> table(rows * dim);
    std::uint64_t s = dim;
    // Values of mixed magnitude and sign, so that the order of the additions shows in the bits.
    for (auto& x : table)
      x = static_cast<float>(static_cast<std::int64_t>(trinity::detail::splitmix_next(s) % 2000001) - 1000000) *
          (trinity::detail::splitmix_next(s) % 2 ? 1e-3f : 7.0f);
    std::vector<std::uint64_t> indices;
    std::vector<std::size_t> offsets{0};
    for (std::size_t bag = 0; bag < 40; ++bag) {
      for (std::size_t k = 0; k < bag % 9; ++k) indices.push_back(trinity::detail::splitmix_next(s) % rows);
      offsets.push_back(indices.size());  // bags 0, 9, 18, ... are empty
    }
    const embedding::bag_batch batch{indices, offsets};
    for (const auto p : {embedding::pooling::sum, embedding::pooling::mean}) {
      std::vector<float> want(batch.bags() * dim, 0.0f);
      for (std::size_t b = 0; b < batch.bags(); ++b) {
        for (std::size_t i = offsets[b]; i < offsets[b + 1]; ++i)
          for (std::size_t k = 0; k < dim; ++k) want[b * dim + k] += table[indices[i] * dim + k];
        const auto n = offsets[b + 1] - offsets[b];
        if (p == embedding::pooling::mean && n)
          for (std::size_t k = 0; k < dim; ++k) want[b * dim + k] /= static_cast<float>(n);
      }
      for (const auto set : {isa::portable, isa::avx2, isa::avx512}) {
        if (static_cast<int>(set) > static_cast<int>(trinity::detail::detected_isa())) continue;
        CAPTURE(trinity::detail::to_string(set));
        trinity::detail::scoped_isa on(set);
        std::vector<float> got(want.size(), -1.0f);
        embedding::embedding_bag(table, dim, batch, p, got);
        CHECK(got == want);
      }
    }
  }
}

TEST_CASE("the recorded run: embedding_bag reads its rows faster than a plain gather, near memcpy's rate",
          "[embedding]") {
  // bench/embedding.cpp, recorded on the ci build: summing a bag's rows in registers beats copying them out one
  // by one, and reads rows at least 80% as fast as memcpy moves the same bytes.
  const auto j = io::load(std::string(TRINITY_SOURCE_DIR) + "/bench/results/embedding-ci.json");
  std::map<std::string, const io::json*> by;
  for (const auto& b : j.at("benchmarks")) by[b.at("name").get<std::string>()] = &b;
  const auto& bag = *by.at("embedding/bag/real_time");
  CHECK(bag.at("x_gather").get<double>() >= 1.0);
  CHECK(bag.at("x_memcpy").get<double>() >= 0.8);
  CHECK(by.at("embedding/tiered/100/real_time")->at("hit_rate").get<double>() == 1.0);
  CHECK(j.at("context").at("trinity_build").get<std::string>().rfind("preset ci", 0) == 0);
}

}  // namespace embedding_embedding_bag_test
