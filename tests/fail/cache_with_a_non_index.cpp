// A cache needs an index it can search by similarity; a std::vector is not one.
// expect: (constraints not satisfied|template constraint failure).*SimilarityIndex
#include <trinity/cache/approximate_cache.hpp>

#include <vector>

// Positive control: the flat index is a SimilarityIndex.
static_assert(trinity::SimilarityIndex<trinity::cache::flat_index>, "positive control failed");

int main() {
  trinity::cache::approximate_cache<std::vector<float>> nonsense(std::vector<float>{}, {});
  (void)nonsense;
}
