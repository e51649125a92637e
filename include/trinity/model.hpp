#pragma once
//! \file
//! Umbrella for trinity/model/: the paper's three trade-off models.
#include <trinity/model/cache.hpp>
#include <trinity/model/collectives.hpp>
#include <trinity/model/compression.hpp>
#include <trinity/model/deficit.hpp>
#include <trinity/model/fit.hpp>
#include <trinity/model/frontier.hpp>
#include <trinity/model/gemm.hpp>
#include <trinity/model/coresidency.hpp>
#include <trinity/model/hetero.hpp>
#include <trinity/model/hit_rate.hpp>
#include <trinity/model/parallel_fit.hpp>
#include <trinity/model/parallel_training.hpp>
#include <trinity/model/serving.hpp>
#include <trinity/model/sharding.hpp>
#include <trinity/model/transformer.hpp>
