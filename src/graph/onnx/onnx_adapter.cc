#include "graph/onnx/onnx_adapter.h"

#include <algorithm>
#include <set>

#include "graph/onnx/onnx_convert.h"

namespace opscope {
namespace {

std::string NodeWhat(const onnx::NodeProto& n, int64_t opset) {
  return "ONNX node '" + n.name() + "' (" + n.op_type() + ", opset " + std::to_string(opset) + ")";
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

void RemoveAttr(onnx::NodeProto& n, const std::string& name) {
  auto* attrs = n.mutable_attribute();
  for (int i = 0; i < attrs->size(); ++i) {
    if (attrs->Get(i).name() == name) {
      attrs->DeleteSubrange(i, 1);
      return;
    }
  }
}

void SetIntAttr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  RemoveAttr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void SetStringAttr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  RemoveAttr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void SetIntsAttr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  RemoveAttr(n, name);
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// Puts `name` at input position `index`, padding skipped positions with "" (omitted).
void SetInput(onnx::NodeProto& n, int index, const std::string& name) {
  while (n.input_size() <= index) n.add_input("");
  n.set_input(index, name);
}

StatusOr<Tensor> Int64Vector(const std::vector<int64_t>& v) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kI64, Shape({static_cast<int64_t>(v.size())})));
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

StatusOr<Tensor> FloatVector(const std::vector<float>& v) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(DType::kF32, Shape({static_cast<int64_t>(v.size())})));
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

StatusOr<Tensor> Scalar(DType dtype, double value) {
  OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, Shape()));
  t.FlatSetFromDouble(0, value);
  return t;
}

// Rewrites one node; `out` starts as a copy of the node.
class Rewriter {
 public:
  Rewriter(const onnx::NodeProto& node, const NodeEnv& env) : env_(env) { out_.node = node; }

  onnx::NodeProto& node() { return out_.node; }
  int64_t opset() const { return env_.opset; }
  std::string what() const { return NodeWhat(out_.node, env_.opset); }
  const onnx::AttributeProto* attr(const std::string& name) const { return FindAttr(out_.node, name); }

  // Input `index` becomes a new constant named after the node's first output.
  Status AddConstantInput(int index, const std::string& role, Tensor value) {
    std::string base = out_.node.output_size() > 0 && !out_.node.output(0).empty() ? out_.node.output(0)
                                                                                     : out_.node.name();
    std::string name = base + "::" + role;
    SetInput(out_.node, index, name);
    out_.constants[name] = std::move(value);
    out_.changed = true;
    return Status::Ok();
  }

  // An INTS attribute that became an int64 input; absent attr: input left omitted.
  Status IntsAttrToInput(const std::string& attr_name, int index) {
    const onnx::AttributeProto* a = attr(attr_name);
    if (!a) return Status::Ok();
    std::vector<int64_t> v(a->ints().begin(), a->ints().end());
    RemoveAttr(out_.node, attr_name);
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Int64Vector(v));
    return AddConstantInput(index, attr_name, std::move(t));
  }

  void Drop(const std::string& attr_name) {
    if (attr(attr_name)) {
      RemoveAttr(out_.node, attr_name);
      out_.changed = true;
    }
  }

  const TensorDesc* Desc(int input) const {
    if (input >= out_.node.input_size()) return nullptr;
    auto it = env_.descs.find(out_.node.input(input));
    return it == env_.descs.end() ? nullptr : &it->second;
  }

  const Tensor* Value(int input) const {
    if (input >= out_.node.input_size()) return nullptr;
    auto it = env_.values.find(out_.node.input(input));
    return it == env_.values.end() ? nullptr : &it->second;
  }

  void MarkChanged() { out_.changed = true; }
  AdaptedNode Take() { return std::move(out_); }

 private:
  const NodeEnv& env_;
  AdaptedNode out_;
};

// Opsets 1-5 let a node name inputs it may overwrite; later opsets dropped the
// idea and it never changed the results.
void DropConsumedInputs(Rewriter& r) { r.Drop("consumed_inputs"); }

// Softmax, LogSoftmax, Hardmax before 13 flatten the input to 2-D at `axis`
// (default 1) and normalise each row. That equals opset 13's one-axis form
// exactly when every dim after `axis` is 1 (the last axis included).
Status AdaptCoercedSoftmax(Rewriter& r) {
  int64_t axis = r.attr("axis") ? r.attr("axis")->i() : 1;
  const TensorDesc* x = r.Desc(0);
  if (!x) {
    return UnimplementedError(r.what() + ": before opset 13 the op normalises over the input flattened at axis " +
                              std::to_string(axis) + "; converting it needs the input's shape, which is unknown");
  }
  OPSCOPE_ASSIGN_OR_RETURN(int a, NormalizeAxis(axis, x->shape.rank()));
  for (int d = a + 1; d < x->shape.rank(); ++d) {
    if (x->shape[d] != 1) {
      return UnimplementedError(r.what() + ": before opset 13 the op normalises over dims " + std::to_string(a) +
                                ".." + std::to_string(x->shape.rank() - 1) + " of " + x->shape.ToString() +
                                " taken together; opset 13's form normalises over one axis (express it as "
                                "Reshape + " + r.node().op_type() + " + Reshape)");
    }
  }
  SetIntAttr(r.node(), "axis", a);
  r.MarkChanged();
  return Status::Ok();
}

// Before opset 7 binary ops broadcast only when broadcast=1, B's shape matching
// a run of A's dims starting at `axis` (default: the trailing dims, as numpy).
Status AdaptLegacyBroadcast(Rewriter& r) {
  const onnx::AttributeProto* b = r.attr("broadcast");
  const onnx::AttributeProto* axis = r.attr("axis");
  if (b && b->i() != 0 && axis) {
    const TensorDesc* x = r.Desc(0);
    const TensorDesc* y = r.Desc(1);
    if (!x || !y) {
      return UnimplementedError(r.what() + ": legacy broadcast with axis=" + std::to_string(axis->i()) +
                                " needs both input shapes to convert, which are unknown");
    }
    int64_t a = axis->i() < 0 ? axis->i() + x->shape.rank() : axis->i();
    if (a != x->shape.rank() - y->shape.rank()) {
      return UnimplementedError(r.what() + ": legacy broadcast of " + y->shape.ToString() + " at axis " +
                                std::to_string(axis->i()) + " of " + x->shape.ToString() +
                                " is not numpy broadcasting (needs an Unsqueeze first)");
    }
  }
  r.Drop("broadcast");
  r.Drop("axis");
  return Status::Ok();
}

// Upsample (all versions) and Resize-10 scale by `scales` with the
// "asymmetric" coordinate mapping and, for nearest, floor rounding.
Status AdaptToResize13(Rewriter& r) {
  onnx::NodeProto& n = r.node();
  const bool is_upsample = n.op_type() == "Upsample";
  std::string mode = r.attr("mode") ? r.attr("mode")->s() : "nearest";
  if (mode == "bilinear") mode = "linear";
  if (mode != "nearest" && mode != "linear") {
    return UnimplementedError(r.what() + ": mode '" + mode + "' has no opset-13 Resize equivalent here");
  }
  if (is_upsample && r.opset() < 7) {
    return UnimplementedError(r.what() + ": Upsample-1 (height_scale/width_scale attributes) is not converted");
  }
  std::string scales_name;
  Tensor scales_const;
  if (const onnx::AttributeProto* s = r.attr("scales")) {  // Upsample-7/8
    std::vector<float> v(s->floats().begin(), s->floats().end());
    OPSCOPE_ASSIGN_OR_RETURN(scales_const, FloatVector(v));
    RemoveAttr(n, "scales");
  } else if (n.input_size() >= 2) {
    scales_name = n.input(1);
  } else {
    return InvalidArgumentError(r.what() + ": has no scales (attribute or input)");
  }
  n.set_op_type("Resize");
  std::string x = n.input(0);
  n.clear_input();
  n.add_input(x);
  n.add_input("");  // roi: only tf_crop_and_resize reads it
  if (scales_const.defined()) {
    OPSCOPE_RETURN_IF_ERROR(r.AddConstantInput(2, "scales", std::move(scales_const)));
  } else {
    n.add_input(scales_name);
  }
  SetStringAttr(n, "mode", mode);
  SetStringAttr(n, "coordinate_transformation_mode", "asymmetric");
  if (mode == "nearest") SetStringAttr(n, "nearest_mode", "floor");
  r.MarkChanged();
  return Status::Ok();
}

Status AdaptPadBefore11(Rewriter& r) {
  onnx::NodeProto& n = r.node();
  const onnx::AttributeProto* pads = r.attr("pads");
  if (!pads) pads = r.attr("paddings");  // Pad-1's name
  if (!pads) return InvalidArgumentError(r.what() + ": has no pads attribute");
  std::vector<int64_t> p(pads->ints().begin(), pads->ints().end());
  const std::string pads_name = pads->name();
  double value = r.attr("value") ? r.attr("value")->f() : 0.0;
  RemoveAttr(n, pads_name);
  RemoveAttr(n, "value");
  OPSCOPE_ASSIGN_OR_RETURN(Tensor pt, Int64Vector(p));
  OPSCOPE_RETURN_IF_ERROR(r.AddConstantInput(1, "pads", std::move(pt)));
  if (value != 0.0) {  // 0 is the input form's default: no input needed
    const TensorDesc* x = r.Desc(0);
    if (!x) {
      return UnimplementedError(r.what() + ": the pad value becomes an input of the data's dtype, which is unknown");
    }
    OPSCOPE_ASSIGN_OR_RETURN(Tensor vt, Scalar(x->dtype, value));
    OPSCOPE_RETURN_IF_ERROR(r.AddConstantInput(2, "constant_value", std::move(vt)));
  }
  return Status::Ok();
}

Status AdaptClipBefore11(Rewriter& r) {
  const onnx::AttributeProto* lo = r.attr("min");
  const onnx::AttributeProto* hi = r.attr("max");
  if (!lo && !hi) return Status::Ok();
  const TensorDesc* x = r.Desc(0);
  if (!x) return UnimplementedError(r.what() + ": min/max become inputs of the data's dtype, which is unknown");
  if (lo) {
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Scalar(x->dtype, lo->f()));
    RemoveAttr(r.node(), "min");
    OPSCOPE_RETURN_IF_ERROR(r.AddConstantInput(1, "min", std::move(t)));
  }
  if (hi) {
    OPSCOPE_ASSIGN_OR_RETURN(Tensor t, Scalar(x->dtype, hi->f()));
    RemoveAttr(r.node(), "max");
    OPSCOPE_RETURN_IF_ERROR(r.AddConstantInput(2, "max", std::move(t)));
  }
  return Status::Ok();
}

Status AdaptBatchNorm(Rewriter& r) {
  if (const onnx::AttributeProto* s = r.attr("spatial"); s && s->i() != 1) {
    return UnimplementedError(r.what() + ": spatial=0 (per-activation statistics) has no opset-17 equivalent");
  }
  r.Drop("spatial");
  r.Drop("is_test");
  if (r.opset() < 14 && r.node().output_size() > 1) {
    return UnimplementedError(r.what() + ": training-mode outputs before opset 14 (saved mean/var) are not converted");
  }
  return Status::Ok();
}

// Opset 18 moved the axes of the Reduce ops other than ReduceSum to an input;
// ours take the opset-13 attribute, so a known constant moves back.
Status AdaptReduceAxesInputToAttr(Rewriter& r) {
  onnx::NodeProto& n = r.node();
  if (n.input_size() < 2 || n.input(1).empty()) return Status::Ok();
  const Tensor* axes = r.Value(1);
  if (!axes) {
    return UnimplementedError(r.what() + ": axes come from a computed input; opscope's " + n.op_type() +
                              " takes axes as an attribute (opset 13 form) and needs them constant");
  }
  if (const onnx::AttributeProto* noop = r.attr("noop_with_empty_axes"); noop && noop->i() != 0) {
    return UnimplementedError(r.what() + ": noop_with_empty_axes=1 has no opset-13 equivalent");
  }
  std::vector<int64_t> v;
  OPSCOPE_ASSIGN_OR_RETURN(Tensor host, ToHost(*axes));
  for (int64_t i = 0; i < host.numel(); ++i) v.push_back(static_cast<int64_t>(host.FlatGetAsDouble(i)));
  n.mutable_input()->DeleteSubrange(1, n.input_size() - 1);
  RemoveAttr(n, "noop_with_empty_axes");
  SetIntsAttr(n, "axes", v);
  r.MarkChanged();
  return Status::Ok();
}

const std::set<std::string>& LegacyBroadcastOps() {
  static const std::set<std::string> ops = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or",
                                            "Xor", "Equal", "Greater", "Less"};
  return ops;
}

const std::set<std::string>& ReduceOpsWithAxesAttr() {
  static const std::set<std::string> ops = {"ReduceMean", "ReduceMax",  "ReduceMin",       "ReduceProd",
                                            "ReduceL1",   "ReduceL2",   "ReduceLogSum",    "ReduceLogSumExp",
                                            "ReduceSumSquare"};
  return ops;
}

}  // namespace

// Before opset 7 a 1-D slope of C values meant one slope per channel (dim 1);
// from 7 on the slope broadcasts numpy-style against the trailing dims, so a
// per-channel slope must become [C,1,...,1].
Status AdaptPReluBefore7(Rewriter& r) {
  const TensorDesc* x = r.Desc(0);
  const Tensor* slope = r.Value(1);
  if (!slope || slope->rank() != 1 || slope->numel() == 1) return Status::Ok();
  if (!x) {
    return UnimplementedError(r.what() + ": a per-channel slope needs the input's rank to convert, which is unknown");
  }
  if (x->shape.rank() <= 2) return Status::Ok();  // [N,C] vs [C] means the same in both forms
  std::vector<int64_t> dims(x->shape.rank() - 1, 1);
  dims[0] = slope->numel();
  OPSCOPE_ASSIGN_OR_RETURN(Tensor contiguous, slope->Contiguous());
  OPSCOPE_ASSIGN_OR_RETURN(Tensor reshaped, contiguous.Clone());
  OPSCOPE_ASSIGN_OR_RETURN(reshaped, reshaped.Reshape(Shape(dims)));
  return r.AddConstantInput(1, "slope", std::move(reshaped));
}

std::string AdaptedOpType(const onnx::NodeProto& node, int64_t opset) {
  if (IsDefaultOnnxDomain(node.domain()) && node.op_type() == "Upsample") return "Resize";
  return node.op_type();
}

StatusOr<AdaptedNode> AdaptOnnxNode(const onnx::NodeProto& node, const NodeEnv& env) {
  Rewriter r(node, env);
  if (!IsDefaultOnnxDomain(node.domain())) return r.Take();  // other domains keep their own forms
  const std::string& op = node.op_type();
  const int64_t v = env.opset;

  if (v < 7) DropConsumedInputs(r);

  if ((op == "Squeeze" || op == "Unsqueeze") && v < 13) {
    OPSCOPE_RETURN_IF_ERROR(r.IntsAttrToInput("axes", 1));
  } else if (op == "ReduceSum" && v < 13) {
    OPSCOPE_RETURN_IF_ERROR(r.IntsAttrToInput("axes", 1));
  } else if (ReduceOpsWithAxesAttr().count(op) && v >= 18) {
    OPSCOPE_RETURN_IF_ERROR(AdaptReduceAxesInputToAttr(r));
  } else if (op == "Split") {
    if (v < 13) OPSCOPE_RETURN_IF_ERROR(r.IntsAttrToInput("split", 1));
    if (v >= 18) r.Drop("num_outputs");  // the node's output count says the same
  } else if (op == "Slice" && v < 10) {
    OPSCOPE_RETURN_IF_ERROR(r.IntsAttrToInput("starts", 1));
    OPSCOPE_RETURN_IF_ERROR(r.IntsAttrToInput("ends", 2));
    OPSCOPE_RETURN_IF_ERROR(r.IntsAttrToInput("axes", 3));
  } else if (op == "TopK" && v < 10) {
    const onnx::AttributeProto* k = r.attr("k");
    if (!k) return InvalidArgumentError(r.what() + ": has no k attribute");
    OPSCOPE_ASSIGN_OR_RETURN(Tensor kt, Int64Vector({k->i()}));
    RemoveAttr(r.node(), "k");
    OPSCOPE_RETURN_IF_ERROR(r.AddConstantInput(1, "k", std::move(kt)));
  } else if (op == "Reshape" && v < 5) {
    OPSCOPE_RETURN_IF_ERROR(r.IntsAttrToInput("shape", 1));
  } else if (op == "Pad" && v < 11) {
    OPSCOPE_RETURN_IF_ERROR(AdaptPadBefore11(r));
  } else if (op == "Clip" && v < 11) {
    OPSCOPE_RETURN_IF_ERROR(AdaptClipBefore11(r));
  } else if (op == "Upsample" || (op == "Resize" && v < 11)) {
    OPSCOPE_RETURN_IF_ERROR(AdaptToResize13(r));
  } else if (op == "PRelu" && v < 7) {
    OPSCOPE_RETURN_IF_ERROR(AdaptPReluBefore7(r));
  } else if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && v < 13) {
    OPSCOPE_RETURN_IF_ERROR(AdaptCoercedSoftmax(r));
  } else if (LegacyBroadcastOps().count(op) && v < 7) {
    OPSCOPE_RETURN_IF_ERROR(AdaptLegacyBroadcast(r));
  } else if (op == "Gemm" && v < 7) {
    r.Drop("broadcast");  // from opset 7 C always broadcasts: a superset
  } else if (op == "BatchNormalization" && v < 14) {
    OPSCOPE_RETURN_IF_ERROR(AdaptBatchNorm(r));
  } else if (op == "Cast" && v < 6) {
    const onnx::AttributeProto* to = r.attr("to");
    if (to && to->type() == onnx::AttributeProto::STRING) {
      onnx::TensorProto_DataType t;
      if (!onnx::TensorProto_DataType_Parse(to->s(), &t)) {
        return InvalidArgumentError(r.what() + ": attribute 'to' names no ONNX data type: '" + to->s() + "'");
      }
      SetIntAttr(r.node(), "to", t);
      r.MarkChanged();
    }
  } else if (op == "Concat" && v < 4 && !r.attr("axis")) {
    SetIntAttr(r.node(), "axis", 1);  // Concat-1's default
    r.MarkChanged();
  } else if (op == "Tile" && v < 6) {
    return UnimplementedError(r.what() + ": Tile-1 (tiles and axis as scalar inputs) is not converted");
  }
  return r.Take();
}

}  // namespace opscope
