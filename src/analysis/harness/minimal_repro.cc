#include "analysis/harness/minimal_repro.h"

#include <algorithm>

namespace opscope {

namespace {

int64_t Bytes(const std::vector<Tensor>& ts) {
  int64_t n = 0;
  for (const Tensor& t : ts) n += t.defined() ? t.nbytes() : 0;
  return n;
}

// The inputs cropped to `boxes`; an error when a box does not fit.
StatusOr<std::vector<Tensor>> Cropped(const std::vector<Tensor>& inputs, const std::vector<IndexBox>& boxes) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined()) { out.push_back(inputs[i]); continue; }
    OPSCOPE_ASSIGN_OR_RETURN(Tensor c, CropTensor(inputs[i], boxes[i]));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

MinimalRepro MinimizeInputs(const std::vector<Tensor>& inputs, const InputRegion& region, const FailureCheck& fails) {
  MinimalRepro r;
  r.original_bytes = Bytes(inputs);
  std::vector<IndexBox> whole, target;
  for (size_t i = 0; i < inputs.size(); ++i) {
    whole.push_back(inputs[i].defined() ? WholeBox(inputs[i]) : IndexBox{});
    IndexBox t = i < region.boxes.size() ? region.boxes[i] : whole[i];
    // An input the element does not read is kept whole: the op still needs it.
    if (t.lo.size() != whole[i].lo.size() || t.empty()) t = whole[i];
    target.push_back(t);
  }
  auto try_boxes = [&](const std::vector<IndexBox>& boxes) -> StatusOr<std::vector<Tensor>> {
    ++r.attempts;
    OPSCOPE_ASSIGN_OR_RETURN(std::vector<Tensor> cropped, Cropped(inputs, boxes));
    OPSCOPE_ASSIGN_OR_RETURN(bool still, fails(cropped));
    if (!still) return InvalidArgumentError("passes");
    return cropped;
  };
  auto accept = [&](std::vector<IndexBox> boxes, std::vector<Tensor> cropped) {
    r.found = true;
    r.crops = std::move(boxes);
    r.inputs = std::move(cropped);
    r.repro_bytes = Bytes(r.inputs);
  };

  // 3. No region to crop to, or none that keeps the failure: halve each dim
  // (with the dims of the other inputs of the same length) while it still
  // fails, biggest input first.
  auto halve = [&](const std::string& why) -> MinimalRepro {
    std::vector<IndexBox> current = whole;
    std::vector<Tensor> current_inputs;
    const int budget = r.attempts + 48;
    for (bool progress = true; progress && r.attempts < budget;) {
      progress = false;
      for (size_t i = 0; i < inputs.size() && !progress; ++i) {
        for (size_t d = 0; d < current[i].lo.size() && !progress; ++d) {
          const int64_t len = current[i].hi[d] - current[i].lo[d];
          if (len < 2) continue;
          // The first half, then the second: a failure may live at either end.
          StatusOr<std::vector<Tensor>> c = InvalidArgumentError("untried");
          std::vector<IndexBox> half;
          for (int64_t from : {int64_t{0}, len / 2}) {
            const int64_t size = from == 0 ? len / 2 : len - len / 2;
            auto cut = [&](IndexBox& box, size_t dim, int64_t base) { box.lo[dim] = base + from, box.hi[dim] = base + from + size; };
            half = current;
            cut(half[i], d, current[i].lo[d]);
            for (size_t j = 0; j < inputs.size(); ++j) {  // coupled dims follow
              for (size_t e = 0; j != i && e < half[j].lo.size(); ++e) {
                if (current[j].hi[e] - current[j].lo[e] == len) cut(half[j], e, current[j].lo[e]);
              }
            }
            c = try_boxes(half);
            if (!c.ok()) {  // alone, when the coupled crop is refused or passes
              half = current;
              cut(half[i], d, current[i].lo[d]);
              c = try_boxes(half);
            }
            if (c.ok()) break;
          }
          if (c.ok()) current = half, current_inputs = *std::move(c), progress = true;
        }
      }
    }
    if (!current_inputs.empty()) {
      accept(current, std::move(current_inputs));
      return r;
    }
    r.note = why + "; halving each dim lost the failure (" + std::to_string(r.attempts) + " crops tried)";
    return r;
  };

  bool all_whole = true;
  for (size_t i = 0; i < target.size(); ++i) all_whole = all_whole && target[i].lo == whole[i].lo && target[i].hi == whole[i].hi;
  if (all_whole) return halve("the input region is all of every input");
  // 1. Every input cropped to its region at once.
  if (auto c = try_boxes(target); c.ok()) {
    accept(target, *std::move(c));
    return r;
  }

  // 2. One dim at a time, biggest saving first.
  struct Move { size_t input; int dim; double saving; };
  std::vector<Move> moves;
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (size_t d = 0; d < target[i].lo.size(); ++d) {
      const int64_t n = whole[i].hi[d], k = target[i].hi[d] - target[i].lo[d];
      if (k < n) moves.push_back({i, static_cast<int>(d), static_cast<double>(inputs[i].nbytes()) * (n - k) / n});
    }
  }
  std::stable_sort(moves.begin(), moves.end(), [](const Move& a, const Move& b) { return a.saving > b.saving; });
  std::vector<IndexBox> current = whole;
  std::vector<Tensor> current_inputs;
  for (const Move& m : moves) {
    std::vector<IndexBox> alone = current;
    alone[m.input].lo[m.dim] = target[m.input].lo[m.dim];
    alone[m.input].hi[m.dim] = target[m.input].hi[m.dim];
    if (auto c = try_boxes(alone); c.ok()) {
      current = alone, current_inputs = *std::move(c);
      continue;
    }
    // Coupled dims: the same range on every other input's dim of that length.
    const int64_t n = whole[m.input].hi[m.dim];
    std::vector<IndexBox> linked = alone;
    bool any = false;
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (j == m.input) continue;
      for (size_t e = 0; e < linked[j].lo.size(); ++e) {
        if (whole[j].hi[e] != n || linked[j].hi[e] - linked[j].lo[e] != n) continue;
        linked[j].lo[e] = alone[m.input].lo[m.dim];
        linked[j].hi[e] = alone[m.input].hi[m.dim];
        any = true;
      }
    }
    if (!any) continue;
    if (auto c = try_boxes(linked); c.ok()) current = linked, current_inputs = *std::move(c);
  }
  if (!current_inputs.empty() && Bytes(current_inputs) < r.original_bytes) {
    accept(current, std::move(current_inputs));
    return r;
  }
  return halve("the failure does not survive cropping around " +
               std::string(region.method == "index map" ? "the mapped" : "the perturbed") + " input region");
}

}  // namespace opscope
