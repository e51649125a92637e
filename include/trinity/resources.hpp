#pragma once
//! \file
//! Umbrella for trinity/resources/: the resource vector, resource types, priced trades.
#include <trinity/resources/price_list.hpp>
#include <trinity/resources/priced_trade.hpp>
#include <trinity/resources/resource.hpp>
#include <trinity/resources/resource_vector.hpp>
