#pragma once
//! \file
//! Umbrella for trinity/plan/: systems, workloads, the candidate space, the
//! cost of a training plan and the planner that picks, explains and ranks.
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/edge.hpp>
#include <trinity/plan/planner.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/space.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training.hpp>
#include <trinity/plan/workload.hpp>
