#include "core/json_writer.h"

#include <charconv>
#include <cmath>

#include "core/text_format.h"

namespace opscope {

void AppendJsonEscaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  size_t plain = 0;  // start of the run of bytes copied as they are
  auto flush = [&](size_t i) { out.append(s.data() + plain, i - plain); };
  for (size_t i = 0; i < s.size(); ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x20 && u != '"' && u != '\\' && u < 0x80) continue;
    if (u >= 0x80) {
      const size_t n = Utf8SequenceLength(s, i);
      if (n > 0) {
        i += n - 1;  // a whole valid sequence stays in the run
        continue;
      }
      flush(i);
      out += "\xEF\xBF\xBD";
    } else {
      flush(i);
      switch (u) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 15];
      }
    }
    plain = i + 1;
  }
  flush(s.size());
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_member_.empty()) {
    if (has_member_.back()) out_ += ',';
    has_member_.back() = true;
  }
}

JsonWriter& JsonWriter::Open(char c) {
  BeforeValue();
  out_ += c;
  has_member_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::Close(char c) {
  out_ += c;
  has_member_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view name) {
  BeforeValue();
  out_ += '"';
  AppendJsonEscaped(out_, name);
  out_ += "\":";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view s) {
  BeforeValue();
  out_ += '"';
  AppendJsonEscaped(out_, s);
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  return *this;
}

JsonWriter& JsonWriter::Double(double v) {
  if (!std::isfinite(v)) return Null();
  BeforeValue();
  char buf[32];
  char* end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  out_.append(buf, end);
  // A whole number stays a float to a reader that types by the text (as
  // nlohmann's own output does: 1.0, not 1).
  if (std::string_view(buf, end - buf).find_first_of(".e") == std::string_view::npos) out_ += ".0";
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  BeforeValue();
  out_ += v ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::Raw(std::string_view json_text) {
  BeforeValue();
  out_ += json_text;
  return *this;
}

}  // namespace opscope
