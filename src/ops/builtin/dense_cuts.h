// File: ops/builtin/dense_cuts.h
// Where a GEMM's output columns are cut into the blocks the device's workers
// take in turn, so that the slowest worker is done first.
//
// Cut in whole units (16-column panels, or pairs of them where 512-bit
// blocks take two at a time) and rounded up, the larger of two neighbouring
// blocks first, a few units leave a sliver: a 14x14 plane's 196 columns in
// four blocks of pairs were 64, 64, 64 and 4, eight panels' time on one of
// two workers and four and a bit on the other (a 3x3 over [1,256,14,14] ran
// 657 us on two cores against 1031 on one). ColumnCuts also weighs the cuts
// rounded to the nearest unit, into as many blocks or fewer by a multiple
// of the workers, and takes the one whose slowest worker finishes first.
//
//   std::vector<int64_t> c = dense::ColumnCuts(196, 32, 4, 2, 1);  // {0, 64, 96, 160, 196}
//   // block b: columns [c[b], c[b + 1])
#pragma once

#include <cstdint>
#include <vector>

namespace opscope::dense {

// A block of `cols` columns' time in panel times, on units of `unit`
// columns (16: one panel a block; 32: pairs of 512-bit panels): a pair two,
// a whole panel alone 1.5 (two thirds of a pair's rate), a partial panel of
// at most 8 columns one (256-bit, half its lanes) and a wider one two; on
// 16-column units a panel one and a partial one a half or one.
double ColumnCost(int64_t cols, int64_t unit);

// When the slowest of `workers` is done: `row_blocks` rounds of the blocks
// [cuts[b], cuts[b + 1]), each taken in order by the first worker free.
double CutsFinish(const std::vector<int64_t>& cuts, int64_t unit, int workers, int64_t row_blocks);

// The starts of the blocks n columns are cut into (count + 1 of them, or
// fewer blocks where that finishes sooner), in whole units of `unit`
// columns but the last block: `count` blocks rounded up, unless cuts
// rounded to the nearest unit, into `count` blocks or fewer by a multiple
// of `workers`, finish sooner (a tie keeps the rounded-up ones).
std::vector<int64_t> ColumnCuts(int64_t n, int64_t unit, int64_t count, int workers, int64_t row_blocks);

}  // namespace opscope::dense
