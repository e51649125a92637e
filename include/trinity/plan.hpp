#pragma once
//! \file
//! Umbrella for trinity/plan/: systems, workloads, the candidate space, the
//! cost of a training plan, the engine every workload plugs into (engine.hpp) and
//! the planners that pick, explain and rank.
#include <trinity/plan/codecs.hpp>
#include <trinity/plan/data_curation.hpp>
#include <trinity/plan/diffusion.hpp>
#include <trinity/plan/device.hpp>
#include <trinity/plan/device_presets.hpp>
#include <trinity/plan/dynamic_parallel.hpp>
#include <trinity/plan/edge.hpp>
#include <trinity/plan/embedding_serve.hpp>
#include <trinity/plan/engine.hpp>
#include <trinity/plan/extend.hpp>
#include <trinity/plan/hetero_train.hpp>
#include <trinity/plan/parallel_cluster.hpp>
#include <trinity/plan/parallel_planner.hpp>
#include <trinity/plan/planner.hpp>
#include <trinity/plan/rag_serve.hpp>
#include <trinity/plan/serving.hpp>
#include <trinity/plan/serving_replay.hpp>
#include <trinity/plan/simulate.hpp>
#include <trinity/plan/simulate_serving.hpp>
#include <trinity/plan/space.hpp>
#include <trinity/plan/system.hpp>
#include <trinity/plan/training.hpp>
#include <trinity/plan/training_trades.hpp>
#include <trinity/plan/workload.hpp>
