#include "ops/undeclared_reads.h"

#include <algorithm>

#include "core/text_distance.h"
#include "core/text_format.h"

namespace opscope {

bool UndeclaredReads::declares(std::string_view name) const {
  return std::find(declared_.begin(), declared_.end(), name) != declared_.end();
}

void UndeclaredReads::Note(std::string_view kind, std::string_view name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (first_.empty()) first_ = Message(op_, kind, name, declared_);
}

Status UndeclaredReads::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_.empty() ? Status::Ok() : InvalidArgumentError(first_);
}

std::string UndeclaredReads::Message(std::string_view op, std::string_view kind, std::string_view name,
                                     const std::vector<std::string>& declared) {
  return "op " + std::string(op) + " read " + std::string(kind) + " '" + std::string(name) +
         "', which it does not declare (it declares: " + (declared.empty() ? "none" : JoinStrings(declared, ", ")) +
         ")";
}

}  // namespace opscope
