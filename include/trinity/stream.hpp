#pragma once
//! \file
//! trinity::stream: samples between processes over ZeroMQ, for producer/consumer
//! training across clusters (paper §4.2). A producer sends over N parallel
//! streams, each optionally rate-capped; a consumer delivers each producer's
//! samples in order, once, and keeps its acknowledgements in a journal so
//! either end can die and resume. Its own target: link trinity::stream.

#include <trinity/stream/ack_journal.hpp>
#include <trinity/stream/consumer.hpp>
#include <trinity/stream/producer.hpp>
#include <trinity/stream/rate_cap.hpp>
#include <trinity/stream/stream_error.hpp>
