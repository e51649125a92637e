#pragma once
//! \file
//! Backend: where mechanisms run. A backend owns memory in one Tier, which the
//! host may not be able to address (GPU memory), so bytes enter and leave it
//! through upload and download; copy moves bytes within it. It keeps time:
//! wall-clock on the CPU and GPU, a virtual clock in the simulated fabric.
//! One test body runs against every backend.

#include <concepts>
#include <cstddef>

#include <trinity/opt_in.hpp>
#include <trinity/concepts/resource.hpp>
#include <trinity/tiers/tier.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity {

//! Says `using backend_concept = trinity::backend_tag;`.
template <class B>
concept opts_into_backend = requires {
  typename B::backend_concept;
}
&&std::same_as<typename B::backend_concept, backend_tag>;

//! Names the Tier its memory lives in: `using memory_tier = ...;`.
template <class B>
concept has_memory_tier = requires {
  typename B::memory_tier;
}
&&Tier<typename B::memory_tier>;

//! allocate(bytes, alignment) -> void*, deallocate(p, bytes, alignment).
template <class B>
concept allocates = requires(B& b, void* p, bytes n, std::size_t align) {
  { b.allocate(n, align) } -> std::same_as<void*>;
  b.deallocate(p, n, align);
};

//! copy(destination, source, bytes), both in the backend's memory.
template <class B>
concept copies = requires(B& b, void* dst, const void* src, bytes n) {
  b.copy(dst, src, n);
};

//! upload(backend destination, host source, bytes) and
//! download(host destination, backend source, bytes).
template <class B>
concept moves_host_data = requires(B& b, void* dst, const void* src, bytes n) {
  b.upload(dst, src, n);
  b.download(dst, src, n);
};

//! now() -> seconds, never decreasing.
template <class B>
concept keeps_time = requires(const B& b) {
  { b.now() } -> std::same_as<seconds>;
};

template <class B>
concept Backend = opts_into_backend<B> && names_itself<B> && has_memory_tier<B> && allocates<B> && copies<B> &&
    moves_host_data<B> && keeps_time<B>;

//! Fails to compile, with the fix in the message, unless B is a Backend.
template <class B>
consteval bool diagnose_backend() {
  static_assert(opts_into_backend<B>,
                "trinity: this type is not a Backend. Fix: add `using backend_concept = trinity::backend_tag;`.");
  if constexpr (opts_into_backend<B>) {
    static_assert(names_itself<B>,
                  "trinity: a Backend names itself. Fix: add `static constexpr std::string_view name`.");
    static_assert(has_memory_tier<B>,
                  "trinity: a Backend says where its memory lives. Fix: add `using memory_tier = <a Tier>;`.");
    static_assert(allocates<B>,
                  "trinity: a Backend allocates. Fix: add `void* allocate(trinity::bytes, std::size_t alignment)` "
                  "and `void deallocate(void*, trinity::bytes, std::size_t alignment)`.");
    static_assert(copies<B>, "trinity: a Backend copies. Fix: add `void copy(void*, const void*, trinity::bytes)`.");
    static_assert(moves_host_data<B>,
                  "trinity: a Backend moves bytes to and from the host. Fix: add `void upload(void* dst, const void* "
                  "host_src, trinity::bytes)` and `void download(void* host_dst, const void* src, trinity::bytes)`.");
    static_assert(keeps_time<B>, "trinity: a Backend keeps time. Fix: add `trinity::seconds now() const`.");
  }
  return Backend<B>;
}

}  // namespace trinity
