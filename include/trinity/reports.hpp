#pragma once
//! \file
//! Umbrella for trinity/reports/: what `trinity model`, `trinity cache replay` and `trinity validate --serving`
//! answer, and where a serving plan's time goes, as text and as JSON, for a C++ user to ask the same questions.
//! Part of the trinity::io target (nlohmann/json).
#include <trinity/reports/block_replay.hpp>
#include <trinity/reports/cache_replay.hpp>
#include <trinity/reports/cache_sizing.hpp>
#include <trinity/reports/deficit.hpp>
#include <trinity/reports/frontier.hpp>
#include <trinity/reports/gnuplot.hpp>
#include <trinity/reports/hetero.hpp>
#include <trinity/reports/hit_rate_fits.hpp>
#include <trinity/reports/serving_time.hpp>
#include <trinity/reports/serving_validation.hpp>
#include <trinity/reports/text.hpp>
