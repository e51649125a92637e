#pragma once
//! \file
//! Everything in trinity that needs no dependency beyond the standard library, Boost's headers and xxHash's
//! header: the target trinity::trinity. What it includes, and why each is here:
//!   units, resources, concepts, error   the vocabulary every other part speaks (dimensions, prices, every concept)
//!   tiers, links, presets               where bytes live and how they move, with sourced figures
//!   model                               the analytic models, apart from the mechanisms they price
//!   comm, shard, parallel               collectives (compressed ones included), ZeRO data parallelism,
//!                                       tensor/pipeline/context parallelism
//!   cache, place, fabric, pipeline      caches and replay, placement across tiers, the simulated fabric, the
//!                                       curation executor
//!   retrieval, embedding                a vector index and embedding tables with their data on tiers
//!   plan                                the planners, and a user's own codec and tier in their search
//!   train                               the reference trainer's mechanism, a component (trinity-train's)
//!   backends/cpu, backends/sim          the two backends with no dependency of their own
//!   compress (through comm and plan)   the codecs that need no library, their frames and open decoding: what
//!                                       the compressed collectives send and a user's codec is calibrated with
//! Each component with a dependency of its own has its own target and umbrella header, included by the user who
//! links it: compress.hpp (the lossless codecs: zstd, lz4), io.hpp and workloads.hpp (nlohmann/json), stream.hpp
//! (ZeroMQ), cache/hnsw/hnsw_index.hpp (hnswlib), backends/mpi.hpp, backends/numa.hpp (libnuma) and the CUDA
//! backend.
#include <trinity/backends/cpu.hpp>
#include <trinity/backends/sim.hpp>
#include <trinity/cache.hpp>
#include <trinity/comm.hpp>
#include <trinity/concepts.hpp>
#include <trinity/embedding.hpp>
#include <trinity/error.hpp>
#include <trinity/fabric.hpp>
#include <trinity/links.hpp>
#include <trinity/model.hpp>
#include <trinity/parallel.hpp>
#include <trinity/pipeline.hpp>
#include <trinity/plan.hpp>
#include <trinity/place.hpp>
#include <trinity/presets.hpp>
#include <trinity/resources.hpp>
#include <trinity/retrieval.hpp>
#include <trinity/shard.hpp>
#include <trinity/tiers.hpp>
#include <trinity/train.hpp>
#include <trinity/units.hpp>
#include <trinity/version.hpp>
