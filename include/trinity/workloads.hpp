#pragma once
//! \file
//! The workloads the planner knows, each one type modelling Workload, and their registry: `read_workload`,
//! `find_preset`, `plan` and `simulate` over any of them (workloads/registry.hpp).

#include <trinity/workloads/registry.hpp>
#include <trinity/workloads/workload.hpp>
