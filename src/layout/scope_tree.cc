#include "layout/scope_tree.h"

namespace opscope::layout {

std::vector<int> ScopeDepths(const std::vector<Scope>& scopes) {
  std::vector<int> depth(scopes.size(), 0);
  for (size_t s = 1; s < scopes.size(); ++s) {
    for (int p = scopes[s].parent; p >= 0; p = scopes[p].parent) ++depth[s];
  }
  return depth;
}

Climb ClimbToCommon(const std::vector<Scope>& scopes, const std::vector<int>& depth, int a, int b) {
  Climb c;
  while (depth[a] > depth[b]) {
    c.from_scope = a;
    a = scopes[a].parent;
  }
  while (depth[b] > depth[a]) {
    c.to_scope = b;
    b = scopes[b].parent;
  }
  while (a != b) {
    c.from_scope = a;
    a = scopes[a].parent;
    c.to_scope = b;
    b = scopes[b].parent;
  }
  c.lca = a;
  return c;
}

}  // namespace opscope::layout
