#pragma once
//! \file
//! Memory bound to a NUMA node, through libnuma (target trinity::numa). A CXL
//! memory expander appears to Linux as a CPU-less NUMA node, so binding to it
//! is how a real tier-2 is used today. The resource allocates with
//! numa_alloc_onnode, touches every page so the kernel places it, and can say
//! where each page really went (move_pages in query mode), so placement is
//! verified, not assumed.
//!
//!   numa::node_resource cxl(2);                      // node 2: the expander
//!   place::tier_resource tier("cxl", 512_GB, &cxl);

#include <numa.h>
#include <numaif.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <memory_resource>
#include <new>
#include <string>
#include <vector>

#include <trinity/error.hpp>

namespace trinity::numa {

//! True when the kernel and libnuma support NUMA policy here.
inline bool available() noexcept { return numa_available() >= 0; }
//! Nodes with memory the allocator may bind to (0 .. nodes() - 1 are candidates).
inline int nodes() noexcept { return available() ? numa_max_node() + 1 : 1; }

//! The node each page of [p, p + n) lives on (move_pages with no target: a query). -errno for a page
//! not yet placed.
inline std::vector<int> page_nodes(const void* p, std::size_t n) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t count = (n + page - 1) / page;
  std::vector<void*> pages(count);
  std::vector<int> status(count, -1);
  for (std::size_t i = 0; i < count; ++i)
    pages[i] = const_cast<char*>(static_cast<const char*>(p) + i * page);  // move_pages takes void**, reads only
  if (count && move_pages(0, count, pages.data(), nullptr, status.data(), 0) != 0)
    throw std::runtime_error("trinity::numa: move_pages failed: " + std::string(std::strerror(errno)));
  return status;
}

//! The memory policy mode of the page at p (MPOL_BIND for what node_resource hands out).
inline int policy_of(const void* p) {
  int mode = -1;
  if (get_mempolicy(&mode, nullptr, 0, const_cast<void*>(p), MPOL_F_ADDR) != 0)
    throw std::runtime_error("trinity::numa: get_mempolicy failed: " + std::string(std::strerror(errno)));
  return mode;
}

class node_resource : public std::pmr::memory_resource {
 public:
  explicit node_resource(int node) : node_(node) {
    trinity::detail::require(available(), "node", "this kernel or machine has no NUMA support (numa_available() < 0)");
    trinity::detail::require(
        node >= 0 && node < nodes(), "node",
        std::to_string(node) + " is not a node of this machine (0 to " + std::to_string(nodes() - 1) + ")");
  }
  [[nodiscard]] int node() const noexcept { return node_; }

 private:
  void* do_allocate(std::size_t n, std::size_t alignment) override {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    if (alignment > page) throw std::bad_alloc();  // numa_alloc_onnode aligns to pages, no more
    void* p = numa_alloc_onnode(n == 0 ? 1 : n, node_);
    if (!p) throw std::bad_alloc();
    // First touch places the pages now, under the node's binding, not at some later first use.
    for (std::size_t off = 0; off < n; off += page) static_cast<volatile char*>(p)[off] = 0;
    return p;
  }
  void do_deallocate(void* p, std::size_t n, std::size_t) override { numa_free(p, n == 0 ? 1 : n); }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  int node_;
};

}  // namespace trinity::numa
