#pragma once
//! \file
//! Host memory as a std::pmr::memory_resource: aligned allocations, and for
//! large ones, when asked, transparent huge pages (an anonymous mapping
//! aligned to 2 MiB with madvise(MADV_HUGEPAGE)), which cut TLB misses when a
//! tier holds gigabytes of tensors. Wrap it in a tier_resource to give it a
//! capacity: `place::tier_resource ddr("ddr", 256_GB, &host)`.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <new>

namespace trinity::place {

struct host_options {
  bool huge_pages = false;                             //!< back large allocations with transparent huge pages
  std::size_t huge_page_bytes = std::size_t{2} << 20;  //!< x86-64's 2 MiB pages
  std::size_t alignment = 64;                          //!< at least a cache line, whatever the caller asks
};

class host_resource : public std::pmr::memory_resource {
 public:
  explicit host_resource(host_options opts = {}) : opts_(opts) {}
  [[nodiscard]] const host_options& options() const noexcept { return opts_; }

  //! True when an allocation of n bytes is backed by a huge-page mapping.
  [[nodiscard]] bool maps(std::size_t n) const noexcept { return opts_.huge_pages && n >= opts_.huge_page_bytes; }

 private:
  void* do_allocate(std::size_t n, std::size_t alignment) override {
    const std::size_t align = alignment > opts_.alignment ? alignment : opts_.alignment;
    if (!maps(n)) return ::operator new (n == 0 ? 1 : n, std::align_val_t{align});
    // Over-map by one huge page, then trim both ends so the block starts on a huge-page boundary.
    const std::size_t page = opts_.huge_page_bytes, length = round_up(n, page);
    void* raw = mmap(nullptr, length + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) throw std::bad_alloc();
    const auto start = reinterpret_cast<std::uintptr_t>(raw), aligned = round_up(start, page);
    if (aligned > start) munmap(raw, aligned - start);
    if (const std::size_t tail = start + length + page - (aligned + length))
      munmap(reinterpret_cast<void*>(aligned + length), tail);
    void* p = reinterpret_cast<void*>(aligned);
    madvise(p, length, MADV_HUGEPAGE);  // advice: the kernel may still use small pages
    return p;
  }
  void do_deallocate(void* p, std::size_t n, std::size_t alignment) override {
    const std::size_t align = alignment > opts_.alignment ? alignment : opts_.alignment;
    if (!maps(n)) return ::operator delete (p, std::align_val_t{align});
    munmap(p, round_up(n, opts_.huge_page_bytes));
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  static std::size_t round_up(std::size_t v, std::size_t to) noexcept { return (v + to - 1) / to * to; }

  host_options opts_;
};

}  // namespace trinity::place
