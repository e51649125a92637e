#pragma once
//! \file
//! Resource, the concept of the quantities a trade spends or saves, is defined beside the resources it
//! describes (<trinity/resources/resource_concept.hpp>); the concepts' folder brings it with the others.

#include <trinity/resources/resource_concept.hpp>
