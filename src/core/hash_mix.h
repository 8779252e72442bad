#pragma once
// One 64-bit hash step for the ids and fingerprints the capture layer keys on
// (op ids, a launch's combined input hash). Not cryptographic: cheap and well
// spread, so ids of nearby sequence numbers and addresses do not collide.
// op_id values printed and kept in reports come from it: changing it changes
// every recorded id.

#include <cstdint>

namespace opscope {

// boost's hash_combine step, then a splitmix64-style finish.
inline uint64_t HashMix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  return h;
}

}  // namespace opscope
