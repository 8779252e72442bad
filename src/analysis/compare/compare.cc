#include "opscope/compare.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <cstring>
#include <thread>

#include "analysis/compare/compare_pattern.h"
#include "analysis/compare/value_findings.h"
#include "analysis/compare/verdict_warnings.h"
#include "opscope/device.h"  // ToHost

namespace opscope {

namespace {

// Elements are converted to double a block at a time into stack buffers, so
// one kernel serves every pair of dtypes without a copy of the inputs.
constexpr int kBlock = 2048;
constexpr int kMinDecade = -330, kMaxDecade = 310;  // all finite doubles
constexpr int kDecadeBins = kMaxDecade - kMinDecade + 1;
// The pattern is judged from at most this many mismatch positions (8 MiB).
constexpr int64_t kMaxKeptMismatches = int64_t{1} << 20;
// Longer dims get no per-index aggregate: one per element would cost more
// memory than the inputs (the pattern then works from the kept positions).
constexpr int64_t kMaxAggregatedDim = int64_t{1} << 16;

size_t AggregateSize(int64_t dim) { return dim <= kMaxAggregatedDim ? static_cast<size_t>(dim) : 0; }

const double* Pow10Table() {
  static const std::vector<double> table = [] {
    std::vector<double> t(kDecadeBins + 1);
    for (int d = kMinDecade; d <= kMaxDecade + 1; ++d) t[d - kMinDecade] = std::pow(10.0, d);
    return t;
  }();
  return table.data();
}

// floor(log10(x)) for finite x > 0, without a log per element: the binary
// exponent gives the decade or the one below it.
inline int Decade(double x, const double* pow10) {
  int b = std::ilogb(x);
  int d = static_cast<int>(std::floor(b * 0.30102999566398120));
  d = std::clamp(d, kMinDecade, kMaxDecade);
  while (d < kMaxDecade && x >= pow10[d + 1 - kMinDecade]) ++d;
  while (d > kMinDecade && x < pow10[d - kMinDecade]) --d;
  return d;
}

// Decade() for every normal double in two lookups: within one binary exponent
// floor(log10(x)) takes at most two values, split at a power of ten. Exact,
// as it is built from Decade itself, which is monotonic in x.
class DecadeTable {
 public:
  DecadeTable() {
    const double* pow10 = Pow10Table();
    for (int biased = 1; biased < 2047; ++biased) {
      const double low = std::ldexp(1.0, biased - 1023);
      const double high = std::nextafter(2 * low, 0.0);
      const int d_low = Decade(low, pow10), d_high = Decade(high, pow10);
      low_[biased] = d_low;
      // Decade is monotonic and |d_high - d_low| <= 1, so one threshold splits the binade.
      split_[biased] = d_high == d_low ? INFINITY : pow10[d_high - kMinDecade];
    }
  }
  // floor(log10(x)) for finite x > 0, as Decade gives it.
  int Of(double x) const {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    const int biased = static_cast<int>(bits >> 52);
    if (biased == 0) [[unlikely]] return Decade(x, Pow10Table());  // subnormal
    return low_[biased] + (x >= split_[biased]);
  }

 private:
  int low_[2048] = {};
  double split_[2048] = {};
};

const DecadeTable& Decades() {
  static const DecadeTable table;
  return table;
}

void LoadDoubles(DType dtype, const void* base, int64_t start, int n, double* out) {
  OPSCOPE_SWITCH_ALL(dtype, {
    const scalar_t* p = static_cast<const scalar_t*>(base) + start;
    for (int i = 0; i < n; ++i) out[i] = ToDouble(p[i]);
  });
}

// Monotonic integer image of a float's bits: adjacent values differ by one.
template <typename Bits>
int64_t Ordered(Bits bits) {
  constexpr Bits kSign = Bits{1} << (sizeof(Bits) * 8 - 1);
  return (bits & kSign) ? -static_cast<int64_t>(bits & ~kSign) : static_cast<int64_t>(bits);
}

int64_t OrderedIn(DType dtype, double v) {
  switch (dtype) {
    case DType::kF64: { uint64_t b; std::memcpy(&b, &v, 8); return Ordered(b); }
    case DType::kF16: return Ordered(Half::FromDouble(v));
    case DType::kBF16: return Ordered(BFloat16::FromFloat(static_cast<float>(v)));
    case DType::kF32: { float f = static_cast<float>(v); uint32_t b; std::memcpy(&b, &f, 4); return Ordered(b); }
    default: return static_cast<int64_t>(v);  // integers: one step is one
  }
}

// One finite pair under the rule; the ulp rule raises `max_ulp` to its steps.
template <CompareRule kRule>
bool JudgeFinite(const Tolerance& tol, DType dtype, double a, double e, double err, double abs_e, int64_t& max_ulp) {
  if constexpr (kRule == CompareRule::kMixed) return err <= tol.atol + tol.rtol * abs_e;
  if constexpr (kRule == CompareRule::kAbsolute) return err <= tol.atol;
  if constexpr (kRule == CompareRule::kRelative) return err <= std::max(tol.atol, tol.rtol * abs_e);
  if constexpr (kRule == CompareRule::kBitExact) return err == 0 && std::signbit(a) == std::signbit(e);
  if constexpr (kRule == CompareRule::kUlp) {
    const int64_t ulp = std::llabs(OrderedIn(dtype, a) - OrderedIn(dtype, e));
    max_ulp = std::max(max_ulp, ulp);
    return ulp <= tol.max_ulp;
  }
  return false;
}

struct Candidate {
  bool mismatch;
  double err;
  int64_t index;
  double expected, actual;
};

// Mismatches rank above matches, then larger errors, then lower indices.
bool Worse(const Candidate& x, const Candidate& y) {
  if (x.mismatch != y.mismatch) return x.mismatch;
  if (x.err != y.err) return x.err > y.err;
  return x.index < y.index;
}

struct HistAccum {
  int64_t count = 0, mismatched = 0;
  double max_abs_err = 0, sum_abs_err = 0;
  void Add(const HistAccum& o) {
    count += o.count;
    mismatched += o.mismatched;
    max_abs_err = std::max(max_abs_err, o.max_abs_err);
    sum_abs_err += o.sum_abs_err;
  }
};

struct Partial {
  int64_t mismatched = 0, first_mismatch = -1;
  double max_abs = -1;
  int64_t max_abs_index = -1;
  double max_abs_e = 0, max_abs_a = 0;
  double max_rel = -1;
  int64_t max_rel_index = -1;
  double max_rel_e = 0, max_rel_a = 0;
  int64_t max_ulp = -1;
  int64_t finite = 0;
  double sum_abs = 0, sum_sq = 0, dot = 0, sum_aa = 0, sum_ee = 0;
  int64_t nan_a = 0, nan_e = 0, inf_a = 0, inf_e = 0, nan_only_a = 0, inf_only_a = 0;
  int64_t floor_decides = 0, floor_tenth = 0, sign_flips = 0, nonzero = 0;
  std::vector<HistAccum> decades = std::vector<HistAccum>(kDecadeBins);
  HistAccum zero, non_finite;
  std::vector<Candidate> heap;  // min-heap under Worse: the least bad on top
  std::vector<std::vector<int64_t>> by_dim;
  std::vector<std::vector<double>> err_by_dim;
  std::vector<int64_t> kept;
  bool capped = false;
  std::vector<int64_t> lo_by_dim, hi_by_dim;  // the mismatches' coordinate range in each dim
};

class Engine {
 public:
  Engine(const Tensor& a, const Tensor& e, const Tolerance& t, const CompareOptions& o)
      : a_(a), e_(e), tol_(t), k_(std::max(0, o.worst_k)), dims_(a.shape().dims()),
        exact_int64_(Is64BitInteger(a.dtype()) && Is64BitInteger(e.dtype())) {
    // Below |e| = atol/rtol the floor is the larger bound (relative: the
    // max of the two; mixed: atol outweighs rtol*|e|); the other rules have none.
    if ((t.rule == CompareRule::kMixed || t.rule == CompareRule::kRelative) && t.atol > 0) {
      floor_below_ = t.rtol > 0 ? t.atol / t.rtol : std::numeric_limits<double>::infinity();
      tenth_upto_ = 10 * t.atol;
    }
  }

  void Run(int64_t begin, int64_t end, int64_t keep_cap, Partial& p) {
    p.by_dim.resize(dims_.size());
    p.err_by_dim.resize(dims_.size());
    p.lo_by_dim.assign(dims_.size(), INT64_MAX);
    p.hi_by_dim.assign(dims_.size(), -1);
    for (size_t d = 0; d < dims_.size(); ++d) {
      p.by_dim[d].assign(AggregateSize(dims_[d]), 0);
      p.err_by_dim[d].assign(AggregateSize(dims_[d]), 0.0);
    }
    switch (tol_.rule) {
      case CompareRule::kMixed: return RunRule<CompareRule::kMixed>(begin, end, keep_cap, p);
      case CompareRule::kAbsolute: return RunRule<CompareRule::kAbsolute>(begin, end, keep_cap, p);
      case CompareRule::kRelative: return RunRule<CompareRule::kRelative>(begin, end, keep_cap, p);
      case CompareRule::kBitExact: return RunRule<CompareRule::kBitExact>(begin, end, keep_cap, p);
      case CompareRule::kUlp: return RunRule<CompareRule::kUlp>(begin, end, keep_cap, p);
    }
  }

 private:
  // The rule is a template argument and the running sums and maxima live in
  // locals (stores into the histogram could alias Partial's fields), so the
  // common finite pair costs a few instructions. The per-element arithmetic
  // and its order are the same for every dtype pair: an element's doubles
  // decide its result, whatever their dtypes were.
  template <CompareRule kRule>
  void RunRule(int64_t begin, int64_t end, int64_t keep_cap, Partial& p) {
    const DecadeTable& decades = Decades();
    HistAccum* const by_decade = p.decades.data() - kMinDecade;
    int64_t finite = 0, floor_decides = 0, floor_tenth = 0, sign_flips = 0, nonzero = 0;
    double sum_abs = 0, sum_sq = 0, dot = 0, sum_aa = 0, sum_ee = 0;
    double max_abs = p.max_abs, max_rel = p.max_rel;
    int64_t max_abs_index = p.max_abs_index, max_rel_index = p.max_rel_index;
    double max_abs_e = p.max_abs_e, max_abs_a = p.max_abs_a, max_rel_e = p.max_rel_e, max_rel_a = p.max_rel_a;
    alignas(64) double av[kBlock], ev[kBlock];
    for (int64_t start = begin; start < end; start += kBlock) {
      const int n = static_cast<int>(std::min<int64_t>(kBlock, end - start));
      LoadDoubles(a_.dtype(), a_.raw_data(), start, n, av);
      LoadDoubles(e_.dtype(), e_.raw_data(), start, n, ev);
      for (int i = 0; i < n; ++i) {
        const double a = av[i], e = ev[i];
        if (std::isfinite(a) && std::isfinite(e)) [[likely]] {
          // int64 and uint64 beyond 2^53 do not survive the trip through
          // double: their difference is taken on the integers themselves.
          const double diff = exact_int64_ ? ExactInt64Diff(start + i) : a - e;
          const double err = std::fabs(diff), abs_e = std::fabs(e);
          ++finite;
          sum_abs += err;
          sum_sq += diff * diff;
          dot += a * e;
          sum_aa += a * a;
          sum_ee += e * e;
          floor_decides += abs_e < floor_below_;
          floor_tenth += abs_e < floor_below_ && abs_e <= tenth_upto_;
          sign_flips += a * e < 0;
          nonzero += a != 0 && e != 0;
          const bool ok = Judge<kRule>(a, e, err, abs_e, p);
          if (err > max_abs) [[unlikely]] {
            max_abs = err, max_abs_index = start + i, max_abs_e = e, max_abs_a = a;
          }
          HistAccum* h = &p.zero;
          if (e != 0) [[likely]] {
            const double rel = err / abs_e;
            if (rel > max_rel) [[unlikely]] {
              max_rel = rel, max_rel_index = start + i, max_rel_e = e, max_rel_a = a;
            }
            h = &by_decade[decades.Of(abs_e)];
          }
          ++h->count;
          h->sum_abs_err += err;
          h->max_abs_err = std::max(h->max_abs_err, err);
          if (!ok) [[unlikely]] {
            ++h->mismatched;
            Mismatch(start + i, err, e, a, keep_cap, p);
          } else if (k_ > 0 && (p.heap.size() < static_cast<size_t>(k_) ||
                                (!p.heap.front().mismatch && err > p.heap.front().err))) [[unlikely]] {
            Offer({false, err, start + i, e, a}, p);
          }
        } else {
          // NonFinite keeps the maxima in `p`.
          p.max_abs = max_abs, p.max_abs_index = max_abs_index, p.max_abs_e = max_abs_e, p.max_abs_a = max_abs_a;
          NonFinite(start + i, a, e, keep_cap, p);
          max_abs = p.max_abs, max_abs_index = p.max_abs_index, max_abs_e = p.max_abs_e, max_abs_a = p.max_abs_a;
        }
      }
    }
    p.finite += finite;
    p.floor_decides += floor_decides, p.floor_tenth += floor_tenth, p.sign_flips += sign_flips, p.nonzero += nonzero;
    p.sum_abs += sum_abs, p.sum_sq += sum_sq, p.dot += dot, p.sum_aa += sum_aa, p.sum_ee += sum_ee;
    p.max_abs = max_abs, p.max_abs_index = max_abs_index, p.max_abs_e = max_abs_e, p.max_abs_a = max_abs_a;
    p.max_rel = max_rel, p.max_rel_index = max_rel_index, p.max_rel_e = max_rel_e, p.max_rel_a = max_rel_a;
  }

  static bool Is64BitInteger(DType t) { return t == DType::kI64 || t == DType::kU64; }

  // Every int64 and uint64 value fits an __int128, and so does their difference.
  static __int128 Load128(const Tensor& t, int64_t i) {
    if (t.dtype() == DType::kU64) return t.data<uint64_t>()[i];
    return t.data<int64_t>()[i];
  }

  double ExactInt64Diff(int64_t i) const { return static_cast<double>(Load128(a_, i) - Load128(e_, i)); }

  template <CompareRule kRule>
  bool Judge(double a, double e, double err, double abs_e, Partial& p) const {
    if constexpr (kRule == CompareRule::kUlp) {
      if (exact_int64_) {
        const auto ulp = static_cast<int64_t>(std::min(err, 9.2e18));
        p.max_ulp = std::max(p.max_ulp, ulp);
        return ulp <= tol_.max_ulp;
      }
    }
    return JudgeFinite<kRule>(tol_, a_.dtype(), a, e, err, abs_e, p.max_ulp);
  }

  void NonFinite(int64_t index, double a, double e, int64_t keep_cap, Partial& p) {
    const bool a_nan = std::isnan(a), e_nan = std::isnan(e);
    p.nan_a += a_nan;
    p.nan_e += e_nan;
    p.inf_a += std::isinf(a);
    p.inf_e += std::isinf(e);
    p.nan_only_a += a_nan && !e_nan;
    p.inf_only_a += std::isinf(a) && std::isfinite(e);
    HistAccum& h = std::isfinite(e) ? (e == 0 ? p.zero : p.decades[Decades().Of(std::fabs(e)) - kMinDecade])
                                    : p.non_finite;
    ++h.count;
    const bool ok = (a_nan && e_nan) || a == e;  // equal infinities
    if (ok) return;
    ++h.mismatched;
    // NaN on one side has no size; an infinity on one side is infinitely off.
    const double err = (a_nan || e_nan) ? NAN : INFINITY;
    if (!std::isnan(err) && err > p.max_abs) {
      p.max_abs = err, p.max_abs_index = index, p.max_abs_e = e, p.max_abs_a = a;
    }
    h.max_abs_err = std::isnan(err) ? h.max_abs_err : err;
    Mismatch(index, err, e, a, keep_cap, p);
  }

  void Mismatch(int64_t index, double err, double e, double a, int64_t keep_cap, Partial& p) {
    ++p.mismatched;
    if (p.first_mismatch < 0) p.first_mismatch = index;
    int64_t rest = index;
    for (int d = static_cast<int>(dims_.size()) - 1; d >= 0; --d) {
      const int64_t c = rest % dims_[d];
      rest /= dims_[d];
      p.lo_by_dim[d] = std::min(p.lo_by_dim[d], c);
      p.hi_by_dim[d] = std::max(p.hi_by_dim[d], c);
      if (p.by_dim[d].empty()) continue;
      ++p.by_dim[d][c];
      if (std::isfinite(err)) p.err_by_dim[d][c] += err;
    }
    if (static_cast<int64_t>(p.kept.size()) < keep_cap) p.kept.push_back(index);
    else p.capped = true;
    if (k_ > 0) Offer({true, std::isnan(err) ? INFINITY : err, index, e, a}, p);
  }

  void Offer(const Candidate& c, Partial& p) const {
    auto less_bad = [](const Candidate& x, const Candidate& y) { return Worse(x, y); };
    if (p.heap.size() < static_cast<size_t>(k_)) {
      p.heap.push_back(c);
      std::push_heap(p.heap.begin(), p.heap.end(), less_bad);
    } else if (Worse(c, p.heap.front())) {
      std::pop_heap(p.heap.begin(), p.heap.end(), less_bad);
      p.heap.back() = c;
      std::push_heap(p.heap.begin(), p.heap.end(), less_bad);
    }
  }

  const Tensor& a_;
  const Tensor& e_;
  Tolerance tol_;
  int k_;
  std::vector<int64_t> dims_;
  bool exact_int64_;
  // |e| below floor_below_: the floor decides; up to tenth_upto_ as well: it allows a tenth of |e|.
  double floor_below_ = -1, tenth_upto_ = -1;
};

// Partials arrive in index order: strict comparisons keep the lowest index on ties.
// `kept` receives the sorted mismatch positions the pattern was judged from.
CompareResult Merge(std::vector<Partial>& parts, const Tolerance& tol, const Shape& shape, int k,
                    std::vector<int64_t>& kept, bool& capped) {
  CompareResult r;
  r.tolerance = tol;
  r.total = shape.numel();
  Partial m;
  std::vector<Candidate> cands;
  kept.clear();
  capped = false;
  std::vector<int64_t> lo(shape.rank(), INT64_MAX), hi(shape.rank(), -1);
  m.by_dim.resize(shape.rank());
  m.err_by_dim.resize(shape.rank());
  for (int d = 0; d < shape.rank(); ++d) {
    m.by_dim[d].assign(AggregateSize(shape[d]), 0);
    m.err_by_dim[d].assign(AggregateSize(shape[d]), 0.0);
  }
  for (Partial& p : parts) {
    m.mismatched += p.mismatched;
    if (m.first_mismatch < 0) m.first_mismatch = p.first_mismatch;
    if (p.max_abs > m.max_abs) m.max_abs = p.max_abs, m.max_abs_index = p.max_abs_index, m.max_abs_e = p.max_abs_e, m.max_abs_a = p.max_abs_a;
    if (p.max_rel > m.max_rel) m.max_rel = p.max_rel, m.max_rel_index = p.max_rel_index, m.max_rel_e = p.max_rel_e, m.max_rel_a = p.max_rel_a;
    m.max_ulp = std::max(m.max_ulp, p.max_ulp);
    m.finite += p.finite;
    m.floor_decides += p.floor_decides, m.floor_tenth += p.floor_tenth, m.sign_flips += p.sign_flips, m.nonzero += p.nonzero;
    m.sum_abs += p.sum_abs, m.sum_sq += p.sum_sq, m.dot += p.dot, m.sum_aa += p.sum_aa, m.sum_ee += p.sum_ee;
    m.nan_a += p.nan_a, m.nan_e += p.nan_e, m.inf_a += p.inf_a, m.inf_e += p.inf_e;
    m.nan_only_a += p.nan_only_a, m.inf_only_a += p.inf_only_a;
    for (int b = 0; b < kDecadeBins; ++b) m.decades[b].Add(p.decades[b]);
    m.zero.Add(p.zero);
    m.non_finite.Add(p.non_finite);
    cands.insert(cands.end(), p.heap.begin(), p.heap.end());
    for (int d = 0; d < shape.rank(); ++d) {
      for (size_t i = 0; i < m.by_dim[d].size(); ++i) {
        m.by_dim[d][i] += p.by_dim[d][i];
        m.err_by_dim[d][i] += p.err_by_dim[d][i];
      }
    }
    kept.insert(kept.end(), p.kept.begin(), p.kept.end());
    capped = capped || p.capped;
    for (int d = 0; d < shape.rank() && !p.lo_by_dim.empty(); ++d) {
      lo[d] = std::min(lo[d], p.lo_by_dim[d]);
      hi[d] = std::max(hi[d], p.hi_by_dim[d]);
    }
  }
  r.mismatched = m.mismatched;
  r.first_mismatch_index = m.first_mismatch;
  if (m.max_abs_index >= 0) {
    r.max_abs_err = m.max_abs, r.max_abs_index = m.max_abs_index;
    r.max_abs_coords = UnravelIndex(m.max_abs_index, shape);
    r.expected_at_max_abs = m.max_abs_e, r.actual_at_max_abs = m.max_abs_a;
  }
  if (m.max_rel_index >= 0) {
    r.max_rel_err = m.max_rel, r.max_rel_index = m.max_rel_index;
    r.max_rel_coords = UnravelIndex(m.max_rel_index, shape);
    r.expected_at_max_rel = m.max_rel_e, r.actual_at_max_rel = m.max_rel_a;
  }
  r.max_ulp = m.max_ulp;
  r.finite_pairs = m.finite;
  if (m.finite > 0) {
    r.mean_abs_err = m.sum_abs / m.finite;
    r.rmse = std::sqrt(m.sum_sq / m.finite);
  }
  if (m.sum_aa == 0 && m.sum_ee == 0) r.cosine = 1;
  else if (m.sum_aa == 0 || m.sum_ee == 0) r.cosine = 0;
  else r.cosine = m.dot / (std::sqrt(m.sum_aa) * std::sqrt(m.sum_ee));
  const bool has_floor = (tol.rule == CompareRule::kMixed || tol.rule == CompareRule::kRelative) && tol.atol > 0;
  r.floor_decides = has_floor ? m.floor_decides : -1;
  r.floor_allows_tenth = has_floor ? m.floor_tenth : -1;
  r.sign_flips = m.sign_flips, r.nonzero_pairs = m.nonzero;
  r.nan_actual = m.nan_a, r.nan_expected = m.nan_e, r.inf_actual = m.inf_a, r.inf_expected = m.inf_e;
  r.nan_only_actual = m.nan_only_a, r.inf_only_actual = m.inf_only_a;
  auto add_bin = [&r](HistogramBin::Kind kind, int decade, const HistAccum& h) {
    if (h.count == 0) return;
    r.histogram.push_back({kind, decade, h.count, h.mismatched, h.max_abs_err, h.sum_abs_err});
  };
  add_bin(HistogramBin::Kind::kZero, 0, m.zero);
  for (int b = 0; b < kDecadeBins; ++b) add_bin(HistogramBin::Kind::kDecade, b + kMinDecade, m.decades[b]);
  add_bin(HistogramBin::Kind::kNonFinite, 0, m.non_finite);
  std::sort(cands.begin(), cands.end(), Worse);
  if (cands.size() > static_cast<size_t>(k)) cands.resize(static_cast<size_t>(k));
  for (const Candidate& c : cands) {
    r.worst.push_back({c.index, UnravelIndex(c.index, shape), c.expected, c.actual, c.err});
  }
  r.mismatches_by_dim = std::move(m.by_dim);
  r.abs_err_by_dim = std::move(m.err_by_dim);
  std::sort(kept.begin(), kept.end());
  MismatchFacts facts{.shape = shape, .mismatched = r.mismatched, .kept = kept, .capped = capped,
                      .by_dim = r.mismatches_by_dim, .err_by_dim = r.abs_err_by_dim, .lo_by_dim = lo, .hi_by_dim = hi,
                      .all_nan = r.mismatched > 0 && m.nan_only_a == r.mismatched};
  r.pattern = DescribeMismatchPattern(facts);
  return r;
}

StatusOr<Tensor> HostContiguous(const Tensor& t) {
  Tensor host = t;
  if (!t.on_host()) {
    OPSCOPE_ASSIGN_OR_RETURN(host, ToHost(t));
  }
  return host.Contiguous();
}


}  // namespace

const char* CompareRuleName(CompareRule rule) {
  switch (rule) {
    case CompareRule::kMixed: return "mixed";
    case CompareRule::kAbsolute: return "absolute";
    case CompareRule::kRelative: return "relative";
    case CompareRule::kBitExact: return "bit-exact";
    case CompareRule::kUlp: return "ulp";
  }
  return "?";
}

StatusOr<CompareRule> ParseCompareRule(std::string_view name) {
  for (CompareRule r : {CompareRule::kMixed, CompareRule::kAbsolute, CompareRule::kRelative, CompareRule::kBitExact,
                        CompareRule::kUlp}) {
    if (name == CompareRuleName(r)) return r;
  }
  if (name == "abs") return CompareRule::kAbsolute;
  if (name == "rel") return CompareRule::kRelative;
  if (name == "exact" || name == "bitexact") return CompareRule::kBitExact;
  return InvalidArgumentError("unknown rule '" + std::string(name) +
                              "' (expected mixed, absolute, relative, bit-exact or ulp)");
}

Tolerance DefaultTolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64: return {1e-12, 1e-10};
    case DType::kF32: return {1e-5, 1e-5};
    case DType::kF16: return {1e-3, 1e-3};
    case DType::kBF16: return {1e-2, 1e-2};
    default: return {0, 0, CompareRule::kBitExact};
  }
}

std::string DescribeTolerance(const Tolerance& t) {
  switch (t.rule) {
    case CompareRule::kMixed: return "|a-e| <= " + ThreeDigits(t.atol) + " + " + ThreeDigits(t.rtol) + "*|e|";
    case CompareRule::kAbsolute: return "|a-e| <= " + ThreeDigits(t.atol);
    case CompareRule::kRelative: return "|a-e| <= max(" + ThreeDigits(t.atol) + ", " + ThreeDigits(t.rtol) + "*|e|)";
    case CompareRule::kBitExact: return "a == e bit for bit";
    case CompareRule::kUlp: return "ulp(a,e) <= " + std::to_string(t.max_ulp);
  }
  return "?";
}

std::string HistogramBin::Label() const {
  switch (kind) {
    case Kind::kZero: return "0";
    case Kind::kNonFinite: return "nan/inf";
    case Kind::kDecade: return "[1e" + std::to_string(decade) + ",1e" + std::to_string(decade + 1) + ")";
  }
  return "?";
}

std::vector<int64_t> UnravelIndex(int64_t flat, const Shape& shape) {
  std::vector<int64_t> coords(shape.rank(), 0);
  for (int i = shape.rank() - 1; i >= 0; --i) {
    if (shape[i] == 0) continue;
    coords[i] = flat % shape[i];
    flat /= shape[i];
  }
  return coords;
}

StatusOr<CompareResult> CompareTensors(const Tensor& actual, const Tensor& expected, const Tolerance& tolerance,
                                       const CompareOptions& options) {
  if (actual.shape() != expected.shape()) {
    return InvalidArgumentError("compare: actual " + actual.Describe() + " and expected " + expected.Describe() +
                                " differ in shape");
  }
  if (tolerance.atol < 0 || tolerance.rtol < 0 || tolerance.max_ulp < 0 || std::isnan(tolerance.atol) ||
      std::isnan(tolerance.rtol)) {
    return InvalidArgumentError("compare: tolerances must be >= 0");
  }
  OPSCOPE_ASSIGN_OR_RETURN(Tensor a, HostContiguous(actual));
  OPSCOPE_ASSIGN_OR_RETURN(Tensor e, HostContiguous(expected));
  const int64_t n = a.numel();
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = static_cast<int>(std::clamp<int64_t>(n / (int64_t{1} << 16), 1, std::max(1, threads)));
  Engine engine(a, e, tolerance, options);
  std::vector<Partial> parts(static_cast<size_t>(threads));
  const int64_t share = (n + threads - 1) / threads;
  const int64_t keep_cap = kMaxKeptMismatches / threads;
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    pool.emplace_back([&, t] { engine.Run(std::min(n, t * share), std::min(n, (t + 1) * share), keep_cap, parts[t]); });
  }
  engine.Run(0, std::min(n, share), keep_cap, parts[0]);
  for (std::thread& th : pool) th.join();
  std::vector<int64_t> kept;
  bool capped = false;
  CompareResult r = Merge(parts, tolerance, a.shape(), std::max(0, options.worst_k), kept, capped);
  if (!r.passed() && options.findings) AddValueFindings(a, e, options.inputs, kept, r);
  AddVerdictWarnings(r);
  return r;
}

bool PairPasses(const Tolerance& tolerance, DType dtype, double actual, double expected) {
  if (!std::isfinite(actual) || !std::isfinite(expected)) {
    return (std::isnan(actual) && std::isnan(expected)) || actual == expected;
  }
  const double err = std::fabs(actual - expected), abs_e = std::fabs(expected);
  int64_t ulp = 0;
  switch (tolerance.rule) {
    case CompareRule::kMixed: return JudgeFinite<CompareRule::kMixed>(tolerance, dtype, actual, expected, err, abs_e, ulp);
    case CompareRule::kAbsolute:
      return JudgeFinite<CompareRule::kAbsolute>(tolerance, dtype, actual, expected, err, abs_e, ulp);
    case CompareRule::kRelative:
      return JudgeFinite<CompareRule::kRelative>(tolerance, dtype, actual, expected, err, abs_e, ulp);
    case CompareRule::kBitExact:
      return JudgeFinite<CompareRule::kBitExact>(tolerance, dtype, actual, expected, err, abs_e, ulp);
    case CompareRule::kUlp: return JudgeFinite<CompareRule::kUlp>(tolerance, dtype, actual, expected, err, abs_e, ulp);
  }
  return false;
}

}  // namespace opscope
