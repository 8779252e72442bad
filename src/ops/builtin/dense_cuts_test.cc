#include "ops/builtin/dense_cuts.h"

#include <gtest/gtest.h>

#include <string>

namespace opscope::dense {
namespace {

// The cuts cover [0, n) in increasing order, every inner one on a unit.
void ExpectWellFormed(const std::vector<int64_t>& cuts, int64_t n, int64_t unit) {
  ASSERT_GE(cuts.size(), 2u);
  EXPECT_EQ(cuts.front(), 0);
  EXPECT_EQ(cuts.back(), n);
  for (size_t i = 1; i < cuts.size(); ++i) {
    EXPECT_GT(cuts[i], cuts[i - 1]) << "block " << i - 1 << " is empty";
    if (i + 1 < cuts.size()) {
      EXPECT_EQ(cuts[i] % unit, 0) << "cut " << i;
    }
  }
}

TEST(ColumnCuts, AFourteenByFourteenPlaneInPairsLeavesNoSliverOnTwoWorkers) {
  // 196 columns: six pairs and 4 columns. Rounded up into four blocks they
  // were 64, 64, 64, 4: one worker ran eight panels' time, the other 4.75.
  const std::vector<int64_t> rounded_up = {0, 64, 128, 192, 196};
  EXPECT_DOUBLE_EQ(CutsFinish(rounded_up, 32, 2, 1), 8.0);
  const std::vector<int64_t> cuts = ColumnCuts(196, 32, 4, 2, 1);
  ExpectWellFormed(cuts, 196, 32);
  EXPECT_EQ(cuts, (std::vector<int64_t>{0, 64, 96, 160, 196}));
  // One worker takes 64 then 36 columns (4 + 3 panel times), the other 32 then 64 (2 + 4).
  EXPECT_DOUBLE_EQ(CutsFinish(cuts, 32, 2, 1), 7.0);
  for (size_t b = 0; b + 1 < cuts.size(); ++b) EXPECT_GE(cuts[b + 1] - cuts[b], 32) << "block " << b;
}

TEST(ColumnCuts, RoundedUpCutsStayWhereTheyAreAsGood) {
  // 28x28 in pairs: 224, 192, 192, 176 rounded up finishes at 25 on two
  // workers, the nearest-unit cuts (192, 192, 192, 208) at 25.5.
  EXPECT_EQ(ColumnCuts(784, 32, 4, 2, 1), (std::vector<int64_t>{0, 224, 416, 608, 784}));
  // One worker: nothing to balance.
  EXPECT_EQ(ColumnCuts(196, 32, 4, 1, 1), (std::vector<int64_t>{0, 64, 128, 192, 196}));
  // Whole units that divide evenly: the rounded-up cuts.
  EXPECT_EQ(ColumnCuts(256, 16, 4, 2, 1), (std::vector<int64_t>{0, 64, 128, 192, 256}));
}

TEST(ColumnCuts, NeverFinishLaterThanRoundedUpAndAlwaysCoverTheColumns) {
  for (int64_t unit : {16, 32}) {
    for (int64_t n = 1; n <= 900; n += 7) {
      const int64_t units = (n + unit - 1) / unit;
      for (int64_t count = 1; count <= std::min<int64_t>(units, 24); ++count) {
        for (int workers : {1, 2, 3, 4}) {
          for (int64_t rows : {1, 2}) {
            SCOPED_TRACE("n " + std::to_string(n) + " unit " + std::to_string(unit) + " count " +
                         std::to_string(count) + " workers " + std::to_string(workers));
            std::vector<int64_t> rounded_up(static_cast<size_t>(count + 1));
            for (int64_t i = 0; i <= count; ++i) rounded_up[i] = std::min(n, (i * units + count - 1) / count * unit);
            const std::vector<int64_t> cuts = ColumnCuts(n, unit, count, workers, rows);
            ExpectWellFormed(cuts, n, unit);
            EXPECT_LE(static_cast<int64_t>(cuts.size()) - 1, count);
            EXPECT_LE(CutsFinish(cuts, unit, workers, rows), CutsFinish(rounded_up, unit, workers, rows));
          }
        }
      }
    }
  }
}

TEST(ColumnCost, PairsPanelsAloneAndPartialPanels) {
  EXPECT_DOUBLE_EQ(ColumnCost(64, 32), 4.0);    // two pairs
  EXPECT_DOUBLE_EQ(ColumnCost(48, 32), 3.5);    // a pair and a panel alone
  EXPECT_DOUBLE_EQ(ColumnCost(36, 32), 3.0);    // a pair and 4 columns
  EXPECT_DOUBLE_EQ(ColumnCost(44, 32), 4.0);    // a pair and 12 columns
  EXPECT_DOUBLE_EQ(ColumnCost(52, 32), 4.5);    // a pair, a panel alone, 4 columns
  EXPECT_DOUBLE_EQ(ColumnCost(49, 16), 3.5);    // three panels and one column
  EXPECT_DOUBLE_EQ(ColumnCost(60, 16), 4.0);    // three panels and 12 columns
}

}  // namespace
}  // namespace opscope::dense
