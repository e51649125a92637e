// A backend must keep time; the diagnostic names the member to add.
// expect: a Backend keeps time\. Fix: add `trinity::seconds now\(\) const`
#include <trinity/backends/backend.hpp>
#include <trinity/tiers/presets.hpp>

struct clockless {
  using backend_concept = trinity::backend_tag;
  using memory_tier = trinity::tiers::host_ddr;
  static constexpr std::string_view name = "clockless";
  void* allocate(trinity::bytes, std::size_t);
  void deallocate(void*, trinity::bytes, std::size_t);
  void copy(void*, const void*, trinity::bytes);
  void upload(void*, const void*, trinity::bytes);
  void download(void*, const void*, trinity::bytes);
};

static_assert(trinity::diagnose_backend<clockless>());
int main() {}
