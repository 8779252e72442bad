#include <cstdio>
#include <sstream>

#include "opscope/op.h"
#include "ops/undeclared_reads.h"

namespace opscope {

const char* AttrTypeName(AttrType t) {
  switch (t) {
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kString: return "string";
    case AttrType::kInts: return "ints";
    case AttrType::kFloats: return "floats";
    case AttrType::kStrings: return "strings";
    case AttrType::kTensor: return "tensor";
  }
  return "?";
}

AttrType AttrTypeOf(const AttrValue& v) { return static_cast<AttrType>(v.index()); }

static std::string FormatDouble(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", d);
  return buf;
}

std::string AttrValueToString(const AttrValue& v) {
  switch (AttrTypeOf(v)) {
    case AttrType::kInt: return std::to_string(std::get<int64_t>(v));
    case AttrType::kFloat: return FormatDouble(std::get<double>(v));
    case AttrType::kString: return std::get<std::string>(v);
    case AttrType::kInts: {
      std::string s = "[";
      for (size_t i = 0; i < std::get<3>(v).size(); ++i) s += (i ? "," : "") + std::to_string(std::get<3>(v)[i]);
      return s + "]";
    }
    case AttrType::kFloats: {
      std::string s = "[";
      for (size_t i = 0; i < std::get<4>(v).size(); ++i) s += (i ? "," : "") + FormatDouble(std::get<4>(v)[i]);
      return s + "]";
    }
    case AttrType::kStrings: {
      std::string s = "[";
      for (size_t i = 0; i < std::get<5>(v).size(); ++i) s += (i ? "," : "") + std::get<5>(v)[i];
      return s + "]";
    }
    case AttrType::kTensor: return "<tensor " + std::get<Tensor>(v).Describe() + ">";
  }
  return "?";
}

const AttrValue* Attrs::Find(std::string_view name) const {
  auto it = values_.find(std::string(name));
  if (it == values_.end()) {
    NoteRead(name);
    return nullptr;
  }
  return &it->second;
}

// Only a name with no value can be undeclared: validation rejects undeclared
// names and fills every default, so a present name costs no check.
void Attrs::NoteRead(std::string_view name) const {
  if (check_ && !check_->declares(name)) check_->Note("attribute", name);
}

bool Attrs::has(std::string_view name) const { return Find(name) != nullptr; }

Status Attrs::undeclared_read() const { return check_ ? check_->status() : Status::Ok(); }

int64_t Attrs::i(std::string_view name, int64_t fallback) const {
  const AttrValue* v = Find(name);
  if (!v) return fallback;
  if (auto* p = std::get_if<int64_t>(v)) return *p;
  if (auto* p = std::get_if<double>(v)) return static_cast<int64_t>(*p);
  return fallback;
}

double Attrs::f(std::string_view name, double fallback) const {
  const AttrValue* v = Find(name);
  if (!v) return fallback;
  if (auto* p = std::get_if<double>(v)) return *p;
  if (auto* p = std::get_if<int64_t>(v)) return static_cast<double>(*p);
  return fallback;
}

std::string Attrs::s(std::string_view name, const std::string& fallback) const {
  const AttrValue* v = Find(name);
  if (auto* p = v ? std::get_if<std::string>(v) : nullptr) return *p;
  return fallback;
}

std::vector<int64_t> Attrs::ints(std::string_view name, std::vector<int64_t> fallback) const {
  const AttrValue* v = Find(name);
  if (auto* p = v ? std::get_if<std::vector<int64_t>>(v) : nullptr) return *p;
  return fallback;
}

std::vector<double> Attrs::floats(std::string_view name, std::vector<double> fallback) const {
  const AttrValue* v = Find(name);
  if (!v) return fallback;
  if (auto* p = std::get_if<std::vector<double>>(v)) return *p;
  if (auto* p = std::get_if<std::vector<int64_t>>(v)) return std::vector<double>(p->begin(), p->end());
  return fallback;
}

std::vector<std::string> Attrs::strings(std::string_view name) const {
  const AttrValue* v = Find(name);
  if (auto* p = v ? std::get_if<std::vector<std::string>>(v) : nullptr) return *p;
  return {};
}

const Tensor* Attrs::tensor(std::string_view name) const {
  const AttrValue* v = Find(name);
  return v ? std::get_if<Tensor>(v) : nullptr;
}

std::string Attrs::ToString() const {
  std::string s;
  for (const auto& [k, v] : values_) {
    if (!s.empty()) s += ",";
    s += k + "=" + AttrValueToString(v);
  }
  return s;
}

}  // namespace opscope
