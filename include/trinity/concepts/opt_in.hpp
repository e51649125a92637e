#pragma once
//! \file
//! The opt-in tags (`trinity::tier_tag` and the rest) live in <trinity/opt_in.hpp>, below every component, so
//! that a component's types can opt into a concept without including the concepts that describe them.
//! This path stays for code that includes it.

#include <trinity/opt_in.hpp>
