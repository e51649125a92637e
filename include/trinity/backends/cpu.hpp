#pragma once
//! \file
//! Umbrella for the CPU backend.
#include <trinity/backends/cpu/backend.hpp>
