#include "analysis/diagnose/race_check.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/text_format.h"

namespace opscope {
namespace {

// A vector clock over the streams seen so far (index = stream number).
using Clock = std::vector<uint64_t>;

void Join(Clock& into, const Clock& other) {
  if (into.size() < other.size()) into.resize(other.size(), 0);
  for (size_t i = 0; i < other.size(); ++i) into[i] = std::max(into[i], other[i]);
}

uint64_t At(const Clock& c, size_t i) { return i < c.size() ? c[i] : 0; }

struct Overlap {
  uint64_t begin = 0, bytes = 0;
};

bool Overlaps(const FlightRange& a, const FlightRange& b, Overlap& out) {
  if (a.bytes == 0 || b.bytes == 0) return false;
  const uint64_t lo = std::max(a.begin, b.begin), hi = std::min(a.begin + a.bytes, b.begin + b.bytes);
  if (lo >= hi) return false;
  out = {lo, hi - lo};
  return true;
}

struct Replayed {
  StreamAccess access;
  size_t stream = 0;
  Clock clock;
};

std::string StreamName(const char* device, int id) { return std::string(device) + "/" + std::to_string(id); }

}  // namespace

RaceCheckResult FindRaces(const FlightRingData& ring) {
  RaceCheckResult result;
  // Everything in enqueue order: launches and synchronisation records share one counter.
  struct Item {
    uint64_t seq;
    const LaunchSlot* launch;
    const SyncRecord* sync;
  };
  std::vector<Item> items;
  for (const LaunchSlot& l : ring.launches) items.push_back({l.seq, &l, nullptr});
  for (const SyncRecord& s : ring.syncs) items.push_back({s.seq, nullptr, &s});
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.seq < b.seq; });
  // The sync ring wrapped: edges older than its oldest record are gone.
  if (ring.header.sync_head > static_cast<uint64_t>(kFlightSyncSlots) && !ring.syncs.empty()) {
    result.judged_from_seq = ring.syncs.front().seq;
  }

  std::map<std::string, size_t> stream_index;
  std::vector<Clock> streams;
  std::unordered_map<int32_t, Clock> hosts;          // per host thread
  std::unordered_map<uint64_t, Clock> events;        // last record of each event
  std::unordered_map<uint64_t, Clock> launch_clock;  // op_id -> its launch's clock (copies a kernel issues)
  std::unordered_map<uint64_t, size_t> op_stream;    // op_id -> the stream its dispatcher launch went on
  auto stream_of = [&](const char* device, int id) {
    auto [it, fresh] = stream_index.emplace(StreamName(device, id), streams.size());
    if (fresh) streams.emplace_back();
    return it->second;
  };
  // The host enqueues on stream s: what the host has waited for comes first.
  auto enqueue = [&](size_t s, const Clock& host) {
    Clock& c = streams[s];
    Join(c, host);
    if (c.size() <= s) c.resize(s + 1, 0);
    return &c;
  };

  std::vector<Replayed> accesses;
  struct Allocation {
    uint64_t seq;
    FlightRange range;
  };
  std::vector<Allocation> allocations;
  // What an op's kernel function allocated while it ran (scratch it may hand
  // to a kernel it launches on a stream of its own).
  std::unordered_map<uint64_t, std::vector<FlightRange>> op_allocations;
  // Addresses handed out again between two accesses belong to two buffers.
  auto reallocated_between = [&](uint64_t from, uint64_t to, uint64_t begin, uint64_t bytes) {
    for (const Allocation& al : allocations) {
      if (al.seq > from && al.seq < to && al.range.begin < begin + bytes && begin < al.range.begin + al.range.bytes) {
        return true;
      }
    }
    return false;
  };
  for (const Item& it : items) {
    if (it.launch) {
      const LaunchSlot& l = *it.launch;
      if (l.stream_id < 0) continue;  // a reference run or a refused call: inline on the host
      const size_t s = stream_of(l.device, l.stream_id);
      // A launch on a stream the op made for itself is issued from inside
      // the op's kernel function: after all that came before the op on its
      // stream, but not after the op's own kernels, which run there meanwhile
      // (only an event orders them). The thread issuing it may be a host
      // thread lending itself to the stream: what it waited for is not the
      // kernel's to know.
      const bool side = l.state == static_cast<int32_t>(FlightState::kSide);
      Clock before_op;
      if (side) {
        if (auto lc = launch_clock.find(l.op_id); lc != launch_clock.end()) {
          before_op = lc->second;
          const size_t os = op_stream[l.op_id];
          if (before_op.size() > os && before_op[os] > 0) --before_op[os];
        }
      }
      Clock* c = enqueue(s, side ? before_op : hosts[l.host_tid]);
      ++(*c)[s];
      Replayed r;
      r.stream = s;
      r.clock = *c;
      r.access.seq = l.seq;
      r.access.stream = StreamName(l.device, l.stream_id);
      r.access.op = l.op;
      r.access.kernel = l.kernel;
      r.access.op_id = ShortHex(l.op_id);
      r.access.op_id_raw = l.op_id;
      for (int i = 0; i < l.num_inputs && i < kFlightMaxTensors; ++i) {
        r.access.reads.push_back({l.inputs[i].address, l.inputs[i].bytes});
        r.access.read_names.push_back(std::string(l.op) + "." + l.inputs[i].name);
      }
      for (int i = 0; i < l.num_outputs && i < kFlightMaxTensors; ++i) {
        r.access.writes.push_back({l.outputs[i].address, l.outputs[i].bytes});
        r.access.write_names.push_back(std::string(l.op) + "." + l.outputs[i].name);
      }
      std::string stand_ins;
      if (side) {
        // The dispatcher does not know a side launch's buffers: the op's
        // tensors stand in, and so does every allocation the op made before
        // it (read and written, as scratch is).
        const auto mine = op_allocations.find(l.op_id);
        const size_t n = mine == op_allocations.end() ? 0 : mine->second.size();
        for (size_t i = 0; i < n; ++i) {
          const FlightRange& a = mine->second[i];
          const std::string name = std::string(l.op) + "'s allocation of " + std::to_string(a.bytes) + " bytes";
          r.access.reads.push_back(a);
          r.access.read_names.push_back(name);
          r.access.writes.push_back(a);
          r.access.write_names.push_back(name);
        }
        stand_ins = ", launched by the op on a stream of its own; its buffers taken as the op's tensors" +
                    (n == 0 ? std::string(" (the op allocated nothing before it)")
                            : " and the " + std::to_string(n) + (n == 1 ? " allocation" : " allocations") +
                                  " the op made before it");
      }
      r.access.what = "kernel " + std::string(l.kernel) + " (op " + l.op + ", op_id " + ShortHex(l.op_id) + stand_ins + ")";
      if (!side) {
        launch_clock[l.op_id] = *c;  // the op's own launch, which copies it issues follow
        op_stream[l.op_id] = s;
      }
      accesses.push_back(std::move(r));
      continue;
    }
    const SyncRecord& y = *it.sync;
    const auto kind = static_cast<SyncKind>(y.kind);
    // Work a kernel issues from inside comes after that kernel began: for
    // this record only (the thread may be a host thread lending itself to
    // the stream), and a kernel's waits inside its own run order nothing the
    // host enqueues next.
    const bool from_kernel = y.op_id != 0;
    Clock scratch = hosts[y.host_tid];
    if (from_kernel) {
      if (auto lc = launch_clock.find(y.op_id); lc != launch_clock.end()) Join(scratch, lc->second);
    }
    const Clock& issuer = scratch;
    Clock ignored;
    Clock& host = from_kernel ? ignored : hosts[y.host_tid];
    switch (kind) {
      case SyncKind::kRecord: {
        Clock* c = enqueue(stream_of(y.device, y.stream_id), issuer);
        events[y.event] = *c;
        break;
      }
      case SyncKind::kWait: {
        Clock* c = enqueue(stream_of(y.device, y.stream_id), issuer);
        if (auto e = events.find(y.event); e != events.end()) Join(*c, e->second);
        break;
      }
      case SyncKind::kMemcpy: {
        const size_t s = stream_of(y.device, y.stream_id);
        Clock* c = enqueue(s, issuer);
        ++(*c)[s];
        Replayed r;
        r.stream = s;
        r.clock = *c;
        r.access.seq = y.seq;
        r.access.stream = StreamName(y.device, y.stream_id);
        r.access.is_launch = false;
        r.access.op = y.op;
        r.access.op_id = y.op_id ? ShortHex(y.op_id) : "";
        r.access.op_id_raw = y.op_id;
        r.access.what = "copy of " + std::to_string(y.write.bytes) + " bytes on stream " + r.access.stream +
                        (y.op[0] ? " issued by op " + std::string(y.op) + "'s kernel" : " issued by the host");
        r.access.reads.push_back(y.read);
        r.access.read_names.push_back("copy source");
        r.access.writes.push_back(y.write);
        r.access.write_names.push_back("copy destination");
        accesses.push_back(std::move(r));
        break;
      }
      case SyncKind::kStreamSync:
        Join(host, streams[stream_of(y.device, y.stream_id)]);
        // An op's kernel function that waits for a stream (a side stream it
        // made) does not return before it is done: the op's own stream has
        // that work behind it for everything enqueued there next.
        if (from_kernel) {
          if (auto os = op_stream.find(y.op_id); os != op_stream.end()) {
            const size_t synced = stream_of(y.device, y.stream_id);
            Join(streams[os->second], streams[synced]);
          }
        }
        break;
      case SyncKind::kEventSync:
        if (auto e = events.find(y.event); e != events.end()) Join(host, e->second);
        break;
      case SyncKind::kDeviceSync: {
        const std::string prefix = std::string(y.device) + "/";
        for (const auto& [name, idx] : stream_index) {
          if (name.rfind(prefix, 0) == 0) Join(host, streams[idx]);
        }
        break;
      }
      case SyncKind::kAllocate:
        allocations.push_back({y.seq, y.write});
        if (y.op_id != 0) op_allocations[y.op_id].push_back(y.write);
        break;
      case SyncKind::kNone:
        break;
    }
  }

  result.accesses = accesses.size();
  // A happens before B (A enqueued first) iff B's clock has seen A's tick on A's stream.
  for (size_t j = 0; j < accesses.size(); ++j) {
    const Replayed& b = accesses[j];
    if (b.access.seq < result.judged_from_seq) continue;
    for (size_t i = 0; i < j; ++i) {
      const Replayed& a = accesses[i];
      if (a.access.seq < result.judged_from_seq || a.stream == b.stream) continue;
      if (At(b.clock, a.stream) >= At(a.clock, a.stream)) continue;  // ordered
      auto check = [&](const std::vector<FlightRange>& ra, const std::vector<std::string>& na, bool aw,
                       const std::vector<FlightRange>& rb, const std::vector<std::string>& nb, bool bw) {
        for (size_t x = 0; x < ra.size(); ++x) {
          for (size_t y = 0; y < rb.size(); ++y) {
            Overlap o;
            if (!Overlaps(ra[x], rb[y], o)) continue;
            if (reallocated_between(a.access.seq, b.access.seq, o.begin, o.bytes)) continue;
            result.races.push_back({a.access, b.access, o.begin, o.bytes, aw, bw, na[x], nb[y]});
            return true;
          }
        }
        return false;
      };
      // One race per pair of accesses: write-write, then write-read, then read-write.
      if (check(a.access.writes, a.access.write_names, true, b.access.writes, b.access.write_names, true)) continue;
      if (check(a.access.writes, a.access.write_names, true, b.access.reads, b.access.read_names, false)) continue;
      check(a.access.reads, a.access.read_names, false, b.access.writes, b.access.write_names, true);
    }
  }
  return result;
}

}  // namespace opscope
