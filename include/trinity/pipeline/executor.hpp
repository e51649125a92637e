#pragma once
//! \file
//! The curation pipeline run for real (paper §5.2): CPU-bound operators on a
//! pool of CPU workers, then device-bound models in order, each model with a
//! bounded input queue. Each device is a worker holding one or more models
//! within its memory budget (charged before load, device_memory.hpp). Its
//! scheduler takes a sample for each of its models that has one queued and
//! runs next a step of the one that has had least of the device's time, so
//! co-resident models share its compute equally while they have work and it
//! idles only when none of them has. That is
//! spatial sharing: memory spent on co-resident copies for compute kept busy.
//!
//! Back-pressure: a sample is taken for model j only when model j+1's queue
//! has room for it (a slot is reserved), so no queue ever holds more than its
//! capacity and no device blocks holding a sample; the last model drains
//! into nothing, so the pipeline cannot deadlock whatever the placement.
//!
//! A device is a thread computing at `duty` of one core: after a kernel that
//! computed for t it stays busy until t / duty has passed. That lets several
//! devices share a machine with fewer cores without their kernels competing
//! for them (D devices at duty (cores - c) / D leave c cores to the CPU
//! workers), so utilisation and throughput are measured, not scheduled by the
//! OS. A device's busy time is its kernels' compute over its duty; the
//! sleeps that make it so are cut by however late the one before woke. The kernels are real work (pipeline/kernels.hpp:
//! trinity's codecs and indexes).
//!
//!   pipeline::executor x(cpu_ops, models, {{"gpu0", 8_GB, 0b011}, {"gpu1", 8_GB, 0b110}}, {.cpu_workers = 2});
//!   auto stats = x.run(1000, source);  // stats.samples_per_second(), stats.device_utilization(d)

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <time.h>

#include <trinity/error.hpp>
#include <trinity/pipeline/device_memory.hpp>
#include <trinity/pipeline/resident_model.hpp>
#include <trinity/units/format.hpp>

namespace trinity::pipeline {

struct device_config {
  std::string name;
  bytes memory{};           //!< the budget the models it holds are charged to
  std::uint32_t holds = 0;  //!< a bit set over the models, in pipeline order
  double duty = 1;          //!< share of one core it computes with (see the file comment)
};

struct executor_options {
  std::size_t cpu_workers = 1;
  std::size_t queue_capacity = 16;  //!< samples each model's input queue holds at most
};

//! What a run measured.
struct run_stats {
  std::size_t samples = 0;  //!< that entered and left the pipeline (passed through or dropped)
  double wall_seconds = 0;
  std::size_t cpu_workers = 0;
  double cpu_busy_seconds = 0;                 //!< summed over the CPU workers
  std::vector<std::size_t> entered;            //!< per model: samples it ran
  std::vector<std::size_t> passed;             //!< per model: samples it passed on
  std::vector<double> model_busy_seconds;      //!< per model: device-seconds its kernels took (at the devices' duty)
  std::vector<double> device_busy_seconds;     //!< per device
  std::vector<std::vector<std::size_t>> runs;  //!< [device][model]: kernels run
  std::vector<std::size_t> most_queued;        //!< per model: the deepest its queue (and reservations) got
  std::vector<bytes> resident;                 //!< per device: bytes charged
  std::vector<bytes> loaded;                   //!< per device: bytes its copies report holding

  [[nodiscard]] double samples_per_second() const { return wall_seconds > 0 ? samples / wall_seconds : 0; }
  [[nodiscard]] double device_utilization(std::size_t d) const {
    return wall_seconds > 0 ? device_busy_seconds.at(d) / wall_seconds : 0;
  }
  [[nodiscard]] double mean_device_utilization() const {
    double u = 0;
    for (std::size_t d = 0; d < device_busy_seconds.size(); ++d) u += device_utilization(d);
    return device_busy_seconds.empty() ? 0 : u / static_cast<double>(device_busy_seconds.size());
  }
  [[nodiscard]] double cpu_utilization() const {
    return wall_seconds > 0 && cpu_workers ? cpu_busy_seconds / (wall_seconds * static_cast<double>(cpu_workers)) : 0;
  }
};

class executor {
 public:
  executor(std::vector<cpu_operator> cpu, std::vector<model_operator> models, std::vector<device_config> devices,
           executor_options o = {})
      : cpu_(std::move(cpu)), models_(std::move(models)), devices_(std::move(devices)), o_(o) {
    const std::size_t k = models_.size();
    trinity::detail::require(k <= 32, "models", "at most 32 (a device's holdings are a 32-bit set)");
    trinity::detail::require(o_.cpu_workers >= 1, "cpu_workers", "must be at least 1");
    trinity::detail::require(o_.queue_capacity >= 1, "queue_capacity", "must be at least 1");
    for (std::size_t i = 0; i < cpu_.size(); ++i)
      trinity::detail::require(static_cast<bool>(cpu_[i].run), "cpu[" + std::to_string(i) + "].run",
                               "give the operator's work");
    for (std::size_t j = 0; j < k; ++j)
      trinity::detail::require(static_cast<bool>(models_[j].load), "models[" + std::to_string(j) + "].load",
                               "give the model's loader");
    trinity::detail::require(k == 0 || !devices_.empty(), "devices", "the models need at least one device");
    std::uint32_t held = 0;
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      auto& dev = devices_[d];
      if (dev.name.empty()) dev.name = "device " + std::to_string(d);
      trinity::detail::require(dev.duty > 0 && dev.duty <= 1, dev.name + ".duty", "must lie in (0, 1]");
      trinity::detail::require(k == 32 || dev.holds < (std::uint64_t{1} << k), dev.name + ".holds",
                               "names a model past the pipeline's " + std::to_string(k));
      held |= dev.holds;
    }
    for (std::size_t j = 0; j < k; ++j)
      trinity::detail::require((held >> j) & 1u, "placement",
                               models_[j].name + " is held by no device: its samples would wait forever");
    // Charge, then load: a device never holds more than its budget, even for a moment.
    for (auto& dev : devices_) {
      device_memory mem(dev.name, dev.memory);
      std::vector<std::unique_ptr<resident_model>> copies(k);
      bytes loaded{};
      for (std::size_t j = 0; j < k; ++j) {
        if (!((dev.holds >> j) & 1u)) continue;
        mem.charge(models_[j].name, models_[j].footprint);
        copies[j] = models_[j].load();
        trinity::detail::require(copies[j] != nullptr, models_[j].name + ".load", "returned no model");
        trinity::detail::require(copies[j]->steps() >= 1, models_[j].name + ".steps",
                                 "a kernel takes at least one step");
        trinity::detail::require(copies[j]->memory() <= models_[j].footprint, models_[j].name + ".footprint",
                                 "states " + to_string(models_[j].footprint) + " but a loaded copy holds " +
                                     to_string(copies[j]->memory()) + ". Fix: state what the model holds");
        loaded += copies[j]->memory();
      }
      resident_.push_back(mem.used());
      loaded_.push_back(loaded);
      copies_.push_back(std::move(copies));
    }
  }

  [[nodiscard]] const std::vector<device_config>& devices() const noexcept { return devices_; }

  //! Runs `samples` samples, made by `source(id)`, through the pipeline, and reports what it measured. One
  //! run at a time: the loaded models are the executor's, and a run uses each copy from one device thread.
  run_stats run(std::size_t samples, const std::function<sample(std::uint64_t)>& source) {
    trinity::detail::require(static_cast<bool>(source), "source", "give the samples' source");
    const std::size_t k = models_.size();
    shared st;
    st.n = samples;
    st.queues.resize(k);
    st.reserved.assign(k, 0);
    run_stats r;
    r.cpu_workers = o_.cpu_workers;
    r.entered.assign(k, 0);
    r.passed.assign(k, 0);
    r.model_busy_seconds.assign(k, 0);
    r.device_busy_seconds.assign(devices_.size(), 0);
    r.runs.assign(devices_.size(), std::vector<std::size_t>(k, 0));
    r.most_queued.assign(k, 0);
    r.resident = resident_;
    r.loaded = loaded_;
    if (samples == 0) return r;

    const auto start = clock::now();
    std::vector<std::thread> threads;
    for (std::size_t w = 0; w < o_.cpu_workers; ++w)
      threads.emplace_back([&] { guarded(st, [&] { cpu_worker(st, r, source); }); });
    for (std::size_t d = 0; d < devices_.size(); ++d)
      threads.emplace_back([&, d] { guarded(st, [&] { device_worker(st, r, d); }); });
    for (auto& t : threads) t.join();
    if (st.error) std::rethrow_exception(st.error);
    r.samples = st.finished;
    r.wall_seconds = std::chrono::duration<double>(st.last_finish - start).count();
    return r;
  }

 private:
  using clock = std::chrono::steady_clock;

  static clock::duration thread_cpu_time() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return std::chrono::duration_cast<clock::duration>(std::chrono::seconds(t.tv_sec) +
                                                       std::chrono::nanoseconds(t.tv_nsec));
  }

  struct shared {
    std::mutex m;
    std::condition_variable cv;
    std::size_t n = 0, next = 0, finished = 0;
    std::vector<std::deque<sample>> queues;
    std::vector<std::size_t> reserved;
    clock::time_point last_finish = clock::now();
    bool stop = false;
    std::exception_ptr error;
  };

  template <class F>
  static void guarded(shared& st, F&& f) {
    try {
      f();
    } catch (...) {
      const std::lock_guard lock(st.m);
      if (!st.error) st.error = std::current_exception();
      st.stop = true;
      st.cv.notify_all();
    }
  }

  // Called with the lock held: one more sample has left the pipeline.
  static void finish(shared& st) {
    if (++st.finished == st.n) st.last_finish = clock::now();
  }

  [[nodiscard]] bool has_room(const shared& st, std::size_t j) const {
    return st.queues[j].size() + st.reserved[j] < o_.queue_capacity;
  }

  void cpu_worker(shared& st, run_stats& r, const std::function<sample(std::uint64_t)>& source) {
    const std::size_t k = models_.size();
    std::unique_lock lock(st.m);
    for (;;) {
      st.cv.wait(lock, [&] { return st.stop || st.next == st.n || k == 0 || has_room(st, 0); });
      if (st.stop || st.next == st.n) return;
      const std::uint64_t id = st.next++;
      if (k) ++st.reserved[0];
      lock.unlock();
      const auto t0 = clock::now();
      sample s = source(id);
      for (auto& op : cpu_) op.run(s);
      const double busy = std::chrono::duration<double>(clock::now() - t0).count();
      lock.lock();
      r.cpu_busy_seconds += busy;
      if (k) {
        --st.reserved[0];
        st.queues[0].push_back(std::move(s));
        r.most_queued[0] = std::max(r.most_queued[0], st.queues[0].size() + st.reserved[0]);
      } else {
        finish(st);
      }
      st.cv.notify_all();
    }
  }

  // A sample a device is working on for one of its models, the step its kernel is at, and the device time
  // that model has had (its virtual time, as a fair scheduler keeps it).
  struct slot {
    std::optional<sample> s;
    std::size_t step = 0;
    double had = 0;
  };

  // Called with the lock held: fills each free slot whose model has a sample queued and room after it.
  bool fill(shared& st, run_stats& r, std::uint32_t holds, std::vector<slot>& slots) {
    const std::size_t k = models_.size();
    bool any = false;
    for (std::size_t j = 0; j < k; ++j) {
      if (!((holds >> j) & 1u)) continue;
      if (!slots[j].s && !st.queues[j].empty() && (j + 1 == k || has_room(st, j + 1))) {
        // A model that was idle starts level with the busy ones: no burst for time it did not want.
        for (std::size_t i = 0; i < k; ++i)
          if (slots[i].s) slots[j].had = std::max(slots[j].had, slots[i].had);
        slots[j].s = std::move(st.queues[j].front());
        slots[j].step = 0;
        st.queues[j].pop_front();
        if (j + 1 < k) {
          ++st.reserved[j + 1];
          r.most_queued[j + 1] = std::max(r.most_queued[j + 1], st.queues[j + 1].size() + st.reserved[j + 1]);
        }
        st.cv.notify_all();  // a slot in queue j opened for whoever feeds it
      }
      any |= slots[j].s.has_value();
    }
    return any;
  }

  // One device: steps of the models it is working on, the least served first, so they share its compute.
  void device_worker(shared& st, run_stats& r, std::size_t d) {
    const std::size_t k = models_.size();
    const auto& dev = devices_[d];
    constexpr clock::duration max_late = std::chrono::milliseconds(50);
    clock::duration late{0};
    std::vector<slot> slots(k);
    std::unique_lock lock(st.m);
    for (;;) {
      st.cv.wait(lock, [&] { return st.stop || st.finished == st.n || fill(st, r, dev.holds, slots); });
      if (st.stop || st.finished == st.n) return;
      // The model with work that has had the least of the device: each gets an equal share of its time, as
      // kernels resident together share a GPU, whatever their steps' lengths.
      std::size_t j = k;
      for (std::size_t i = 0; i < k; ++i)
        if (slots[i].s && (j == k || slots[i].had < slots[j].had)) j = i;
      auto& cur = slots[j];
      lock.unlock();
      const auto t0 = clock::now();
      // A device at a duty is charged its thread's own CPU time, so a step preempted by another device's is
      // not charged the wait; a whole core's device, its wall time (a system call less per step).
      const bool throttled = dev.duty < 1;
      const auto c0 = throttled ? thread_cpu_time() : t0.time_since_epoch();
      const bool pass = copies_[d][j]->step(*cur.s, cur.step);
      const auto computed = (throttled ? thread_cpu_time() : clock::now().time_since_epoch()) - c0;
      const auto nominal = std::chrono::duration_cast<clock::duration>(computed / dev.duty);
      if (throttled) {
        // A sleep ends late (timer slack, wake-up); the next one is cut by as much, so the device computes
        // at its duty over the run and not below it.
        const auto until = t0 + nominal - late;
        std::this_thread::sleep_until(until);
        late = std::min<clock::duration>(clock::now() - until, max_late);
      }
      const double busy = std::chrono::duration<double>(nominal).count();
      const bool done = ++cur.step == copies_[d][j]->steps();
      lock.lock();
      r.device_busy_seconds[d] += busy;
      r.model_busy_seconds[j] += busy;
      cur.had += busy;
      if (!done) continue;
      ++r.runs[d][j];
      ++r.entered[j];
      const bool last = j + 1 == k;
      if (!last) --st.reserved[j + 1];
      if (pass) ++r.passed[j];
      if (pass && !last)
        st.queues[j + 1].push_back(std::move(*cur.s));
      else
        finish(st);
      cur.s.reset();
      st.cv.notify_all();
    }
  }

  std::vector<cpu_operator> cpu_;
  std::vector<model_operator> models_;
  std::vector<device_config> devices_;
  executor_options o_;
  std::vector<std::vector<std::unique_ptr<resident_model>>> copies_;  // [device][model], null where not held
  std::vector<bytes> resident_, loaded_;
};

}  // namespace trinity::pipeline
