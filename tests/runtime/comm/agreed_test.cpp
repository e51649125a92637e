// comm::agreed on every in-process backend: where no rank's step throws, each rank keeps its own result; where
// some throw, every rank throws, the failing ones their own exception and the rest the lowest failing rank's
// reason, so that whichever process a launcher keeps tells why.
#include <catch2/catch.hpp>

#include "test_backends.hpp"

#include <trinity/comm/agreed.hpp>
#include <trinity/comm/errors.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace comm_agreed_test {

using namespace trinity;

namespace {

// What rank r saw: its value, or the type and text of what it threw.
struct outcome {
  std::string kind, text;
  long value = -1;
};

template <class Backend>
std::vector<outcome> run_agreed(int ranks, const std::vector<int>& failing) {
  std::vector<outcome> seen(static_cast<std::size_t>(ranks));
  Backend::run(ranks, [&](auto& c) {
    auto& mine = seen[static_cast<std::size_t>(c.rank())];
    const auto step = [&]() -> long {
      if (std::find(failing.begin(), failing.end(), c.rank()) != failing.end())
        throw std::invalid_argument("piece " + std::to_string(c.rank()) + " is damaged");
      return 10L * c.rank();
    };
    try {
      mine.value = comm::agreed(c, step);
      mine.kind = "value";
    } catch (const comm::peer_failed& e) {
      mine = {"peer_failed", e.what()};
    } catch (const std::invalid_argument& e) {
      mine = {"own", e.what()};
    }
  });
  return seen;
}

}  // namespace

TEMPLATE_LIST_TEST_CASE("comm::agreed stops every rank with the first failing rank's reason", "[comm]",
                        test_backends::all) {
  for (int n = 1; n <= 5; ++n) {
    INFO(n << " ranks");
    const auto none = run_agreed<TestType>(n, {});
    for (int r = 0; r < n; ++r) {
      CHECK(none[static_cast<std::size_t>(r)].kind == "value");
      CHECK(none[static_cast<std::size_t>(r)].value == 10L * r);
    }
    // one failing rank, each in turn, and the last two together (the lower one's reason is told)
    std::vector<std::vector<int>> cases;
    for (int f = 0; f < n; ++f) cases.push_back({f});
    if (n >= 3) cases.push_back({n - 1, n - 2});
    for (const auto& failing : cases) {
      const int first = *std::min_element(failing.begin(), failing.end());
      const auto seen = run_agreed<TestType>(n, failing);
      for (int r = 0; r < n; ++r) {
        INFO("rank " << r << " of failing set starting at " << first);
        const auto& o = seen[static_cast<std::size_t>(r)];
        if (std::find(failing.begin(), failing.end(), r) != failing.end()) {
          CHECK(o.kind == "own");
          CHECK(o.text == "piece " + std::to_string(r) + " is damaged");
        } else {
          CHECK(o.kind == "peer_failed");
          CHECK(o.text == "rank " + std::to_string(first) + " failed: piece " + std::to_string(first) + " is damaged");
        }
      }
    }
  }
}

TEST_CASE("comm::agreed runs a step that returns nothing", "[comm]") {
  int calls = 0;
  test_backends::threads_backend::run(3, [&](auto& c) {
    comm::agreed(c, [&] {
      if (c.rank() == 0) ++calls;
    });
  });
  CHECK(calls == 1);
}

}  // namespace comm_agreed_test
