// File: core/gzip.h
// gzip (RFC 1952) through zlib, for the data report.html carries: a
// 100,000-node run's page data is about 90 MB of JSON and 11 MB gzipped,
// which the browser inflates with its own DecompressionStream('gzip').
//
//   std::string gz = Gzip(json_text);                       // level 1: fast
//   OPSCOPE_ASSIGN_OR_RETURN(std::string back, Gunzip(gz, 1 << 30));
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "opscope/status.h"

namespace opscope {

// level: zlib's 1 (fastest) to 9 (smallest).
std::string Gzip(std::string_view data, int level = 1);
// One gzip member back; refused past max_bytes of output (a bomb) or when
// the data is not gzip or ends early.
StatusOr<std::string> Gunzip(std::string_view gz, size_t max_bytes);

}  // namespace opscope
