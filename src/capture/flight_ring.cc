#include "capture/flight_ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

namespace opscope {

StatusOr<FlightRingData> ReadFlightRing(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return NotFoundError(path + ": cannot open the flight recorder's ring: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) < sizeof(RingHeader)) {
    close(fd);
    return InvalidArgumentError(path + ": not a flight recorder ring (too small or not a regular file)");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* base = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return InternalError(path + ": cannot map the ring: " + std::strerror(errno));
  struct Unmap {
    void* p;
    size_t n;
    ~Unmap() { munmap(p, n); }
  } unmap{base, size};

  FlightRingData data;
  std::memcpy(static_cast<void*>(&data.header), base, sizeof(RingHeader));
  const RingHeader& h = data.header;
  if (h.magic != kFlightRingMagic) {
    return FailedPreconditionError(path + ": the ring holds no recording (the program never started the flight "
                                   "recorder: is it linked with libopscope?)");
  }
  if (h.version != kFlightRingVersion) {
    return InvalidArgumentError(path + ": ring version " + std::to_string(h.version) + ", this reader knows " +
                                std::to_string(kFlightRingVersion));
  }
  if (h.slots_per_stream == 0 || FlightRingBytes(h.slots_per_stream) > size) {
    return InvalidArgumentError(path + ": ring truncated (" + std::to_string(size) + " bytes for " +
                                std::to_string(h.slots_per_stream) + " slots per stream)");
  }
  void* mutable_base = base;  // read only; the layout helpers take void*
  // Only the slots a stream ever wrote (its head, at most the ring): the rest
  // of the file is holes, and reading them faulted in every page of a ring
  // sized for 16 streams (13% of a 10,000-node model's `run`).
  const StreamRing* rings = RingStreams(mutable_base);
  for (int s = 0; s < kFlightMaxStreams; ++s) {
    if (rings[s].key == 0) continue;
    const uint64_t used = std::min<uint64_t>(rings[s].head, h.slots_per_stream);
    const LaunchSlot* slots = RingLaunches(mutable_base, h.slots_per_stream, s);
    for (uint64_t i = 0; i < used; ++i) {
      if (slots[i].committed == 0 || slots[i].committed != slots[i].seq + 1) continue;  // empty or torn
      data.launches.push_back(slots[i]);
    }
  }
  const SyncRecord* syncs = RingSyncs(mutable_base, h.slots_per_stream);
  for (int i = 0; i < kFlightSyncSlots; ++i) {
    if (syncs[i].committed == 0 || syncs[i].committed != syncs[i].seq + 1) continue;
    data.syncs.push_back(syncs[i]);
  }
  std::sort(data.launches.begin(), data.launches.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  std::sort(data.syncs.begin(), data.syncs.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  const size_t maps = std::min<size_t>(h.maps_bytes, kFlightMapsBytes);
  const char* text = RingMaps(mutable_base, h.slots_per_stream);
  data.maps.assign(text, strnlen(text, maps));
  return data;
}

}  // namespace opscope
