// The GPU codecs against the GPU's own ceiling: a device-to-device cudaMemcpy of the same fp32 tensor. Each
// benchmark reports its input rate (bytes_per_second, fp32 bytes encoded or decoded per second) and
// "of_copy", its time over the copy's in the same run (below 1: faster than copying the input, as a codec
// that writes a quarter of what it reads can be). plan::gpu_codecs carries these rates into the planner.
//
//   build/bin/trinity-bench-cuda-codecs --benchmark_format=json
#include <benchmark/benchmark.h>

#include <trinity/backends/cuda/codecs.cuh>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

using namespace trinity;

constexpr std::size_t count = std::size_t{64} << 20;  // 64 Mi floats: 256 MiB, far past every cache

struct buffers {
  float* grad = nullptr;
  float* out = nullptr;
  std::byte* body = nullptr;
  buffers() {
    cuda::detail::check(cudaMalloc(&grad, count * 4), "cudaMalloc");
    cuda::detail::check(cudaMalloc(&out, count * 4), "cudaMalloc");
    cuda::detail::check(cudaMalloc(&body, count * 4), "cudaMalloc");
    std::vector<float> host(count);
    for (std::size_t i = 0; i < count; ++i) host[i] = static_cast<float>((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    cuda::detail::check(cudaMemcpy(grad, host.data(), count * 4, cudaMemcpyHostToDevice), "upload");
    cuda::int8_encode(grad, count, body);
    cuda::detail::check(cudaDeviceSynchronize(), "encode");
  }
  ~buffers() {
    cudaFree(grad);
    cudaFree(out);
    cudaFree(body);
  }
};

buffers& data() {
  static buffers b;
  return b;
}

double copy_seconds = 0;

// Times f with CUDA events, per iteration, as the benchmark's manual time.
template <class F>
double run(benchmark::State& state, F f) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  f();  // warm up
  double total = 0;
  for (auto _ : state) {
    cudaEventRecord(start);
    f();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    state.SetIterationTime(ms * 1e-3);
    total += ms * 1e-3;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * count * 4));
  return total / static_cast<double>(state.iterations());
}

void report(benchmark::State& state, double seconds) {
  if (copy_seconds > 0) state.counters["of_copy"] = seconds / copy_seconds;
}

void BM_copy(benchmark::State& state) {
  auto& b = data();
  copy_seconds = run(state, [&] { cudaMemcpyAsync(b.out, b.grad, count * 4, cudaMemcpyDeviceToDevice); });
}
void BM_bf16_encode(benchmark::State& state) {
  auto& b = data();
  report(state, run(state, [&] { cuda::bf16_encode(b.grad, count, b.body); }));
}
void BM_bf16_decode(benchmark::State& state) {
  auto& b = data();
  report(state, run(state, [&] { cuda::bf16_decode(b.body, count, b.out); }));
}
void BM_int8_encode(benchmark::State& state) {
  auto& b = data();
  report(state, run(state, [&] { cuda::int8_encode(b.grad, count, b.body); }));
}
void BM_int8_decode(benchmark::State& state) {
  auto& b = data();
  cuda::int8_encode(b.grad, count, b.body);
  report(state, run(state, [&] { cuda::int8_decode(b.body, count, b.out); }));
}

}  // namespace

BENCHMARK(BM_copy)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_bf16_encode)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_bf16_decode)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_int8_encode)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_int8_decode)->UseManualTime()->Unit(benchmark::kMicrosecond);

int main(int argc, char** argv) {
  if (cuda::device_count() == 0) {
    std::puts("no CUDA device: nothing to measure");
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
