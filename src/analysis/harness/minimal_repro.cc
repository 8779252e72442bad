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

  bool all_whole = true;
  for (size_t i = 0; i < target.size(); ++i) all_whole = all_whole && target[i].lo == whole[i].lo && target[i].hi == whole[i].hi;
  if (all_whole) {
    r.note = "the input region is all of every input: nothing to crop";
    return r;
  }
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
  r.note = "the failure does not survive cropping around " + std::string(region.method == "index map" ? "the mapped" : "the perturbed") +
           " input region (" + std::to_string(r.attempts) + " crops tried)";
  return r;
}

}  // namespace opscope
