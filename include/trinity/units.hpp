#pragma once
//! \file
//! Umbrella for trinity/units/: strong unit types, literals, printing, parsing.

#include <trinity/units/chrono.hpp>
#include <trinity/units/dimension.hpp>
#include <trinity/units/format.hpp>
#include <trinity/units/literals.hpp>
#include <trinity/units/parse.hpp>
#include <trinity/units/quantity.hpp>
