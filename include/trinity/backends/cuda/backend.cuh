#pragma once
//! \file
//! The CUDA backend: device memory from cudaMalloc, transfers on the backend's
//! own stream that are complete when the call returns, and the host's steady
//! clock, which means what it says because every transfer synchronises.
//! Compile with nvcc and link trinity::cuda.

#if !defined(__CUDACC__)
#error "trinity/backends/cuda/backend.cuh is CUDA code: compile this translation unit with nvcc and link trinity::cuda"
#endif

#include <cuda_runtime.h>

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <trinity/opt_in.hpp>
#include <trinity/detail/byte_count.hpp>
#include <trinity/tiers/tier.hpp>
#include <trinity/error.hpp>
#include <trinity/tiers/presets.hpp>
#include <trinity/units/chrono.hpp>
#include <trinity/units/quantity.hpp>

namespace trinity::cuda {

//! A CUDA runtime call that failed, with the call and CUDA's own words.
class error : public std::runtime_error {
 public:
  error(std::string_view call, cudaError_t code)
      : std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) +
                           ")"),
        code_(code) {}
  [[nodiscard]] cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

namespace detail {
inline void check(cudaError_t status, std::string_view call) {
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error state for the next call
    throw error(call, status);
  }
}
}  // namespace detail

//! Devices this process can use; 0 without a driver or a GPU.
inline int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

//! MemoryTier says which GPU's HBM the cost models should assume (H100 by default).
template <class MemoryTier = tiers::h100_hbm3>
class backend {
  static_assert(diagnose_tier<MemoryTier>());

 public:
  using backend_concept = backend_tag;
  using memory_tier = MemoryTier;
  static constexpr std::string_view name = "cuda";
  //! cudaMalloc returns memory aligned to at least this.
  static constexpr std::size_t max_alignment = 256;

  explicit backend(int device = 0) : device_(device) {
    detail::check(cudaSetDevice(device_), "cudaSetDevice");
    detail::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  ~backend() {
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }
  backend(const backend&) = delete;
  backend& operator=(const backend&) = delete;
  backend(backend&& other) noexcept : device_(other.device_), stream_(std::exchange(other.stream_, nullptr)) {}
  backend& operator=(backend&& other) noexcept {
    if (this != &other) {
      if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
      device_ = other.device_;
      stream_ = std::exchange(other.stream_, nullptr);
    }
    return *this;
  }

  [[nodiscard]] void* allocate(bytes n, std::size_t alignment = max_alignment) {
    trinity::detail::require(alignment != 0 && alignment <= max_alignment && (alignment & (alignment - 1)) == 0,
                             "alignment", "must be a power of two no larger than 256, cudaMalloc's guarantee");
    void* p = nullptr;
    detail::check(cudaMalloc(&p, trinity::detail::byte_count(n)), "cudaMalloc");
    return p;
  }
  void deallocate(void* p, bytes, std::size_t = max_alignment) noexcept { (void)cudaFree(p); }

  void copy(void* dst, const void* src, bytes n) { transfer(dst, src, n, cudaMemcpyDeviceToDevice, "copy"); }
  void upload(void* dst, const void* host_src, bytes n) {
    transfer(dst, host_src, n, cudaMemcpyHostToDevice, "upload");
  }
  void download(void* host_dst, const void* src, bytes n) {
    transfer(host_dst, src, n, cudaMemcpyDeviceToHost, "download");
  }

  [[nodiscard]] seconds now() const noexcept {
    return from_chrono(std::chrono::steady_clock::now().time_since_epoch());
  }

  [[nodiscard]] int device() const noexcept { return device_; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return stream_; }

 private:
  void transfer(void* dst, const void* src, bytes n, cudaMemcpyKind kind, const char* what) {
    const std::size_t count = trinity::detail::byte_count(n);
    if (count == 0) return;
    detail::check(cudaMemcpyAsync(dst, src, count, kind, stream_), what);
    detail::check(cudaStreamSynchronize(stream_), what);
  }

  int device_;
  cudaStream_t stream_ = nullptr;
};

}  // namespace trinity::cuda
