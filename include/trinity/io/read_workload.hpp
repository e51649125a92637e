#pragma once
//! \file
//! io::read_workload as 0.1 named it, deprecated in 0.2.0 (CHANGELOG.md) and gone in 0.3.0: a workload is read by
//! its kind's reader through the registry now, workloads::read_workload (<trinity/workloads/registry.hpp>), which
//! returns the workloads::any_workload a program plans, simulates or verifies.

#include <filesystem>

#include <trinity/io/json_object.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/workloads/registry.hpp>

namespace trinity::io {

//! What read_workload gave in 0.1: the workload read, now the registry's any_workload (its .as<D>() and .visit()
//! in place of std::get_if and std::visit on the variant 0.1 held).
struct workload_file {
  workloads::any_workload workload;
};

using any_workload [[deprecated("use workloads::any_workload (CHANGELOG.md, 0.2.0)")]] = workloads::any_workload;

[[deprecated(
    "use workloads::read_workload(j, s, {.base = base}) from <trinity/workloads/registry.hpp> "
    "(CHANGELOG.md, 0.2.0)")]] inline workload_file
read_workload(const json& j, const plan::system& s, const std::filesystem::path& base = {}) {
  // 0.1 read a file without "type" as training; this deprecated reader keeps that until it goes, the registry's
  // refuses such a file (CHANGELOG.md).
  if (j.is_object() && !j.contains("type")) {
    json typed = j;
    typed["type"] = "training";
    return {workloads::read_workload(typed, s, workloads::read_context{base, {}})};
  }
  return {workloads::read_workload(j, s, workloads::read_context{base, {}})};
}

}  // namespace trinity::io
