#pragma once
// A workload given as a preset name or a JSON file, read through the registry of workloads (plan_command.cpp);
// errors name the path. Apart from cli.hpp so that only the commands that plan compile every workload.

#include "cli.hpp"

#include <trinity/workloads/registry.hpp>

namespace trinity::cli {

using workloads::any_workload;
any_workload workload_from(const std::string& arg, const plan::system& s);

}  // namespace trinity::cli
