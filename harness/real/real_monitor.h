// RealMonitor: the real mode's observer. It is fed every change of pods and replication controllers
// a watch on the real API server delivers (with the wall-clock time it arrived, relative to the run's
// origin), mirrors the objects, and keeps per controller the counts, peaks, windows, matchers,
// conditions seen and change-only series that the simulation's WorldMonitor keeps, with the same
// counting rule: a pod counts for a controller when it is in its namespace, matches its selector and
// is owned by it (controller ownerReference uid) or is an orphan. Counts are recomputed for the
// controllers of the changed object's namespace on each change (real-mode scenarios are small).
//
// Resync(list) folds a fresh list in (objects gone from it are deleted, others added or updated): the
// harness re-lists after its watch broke (an etcd restart, a compaction).
//
// Thread-safety: none; the runner feeds it from one thread.
#ifndef RCSIM_HARNESS_REAL_REAL_MONITOR_H_
#define RCSIM_HARNESS_REAL_REAL_MONITOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/time.h"
#include "engine/types.h"
#include "harness/run_result.h"

namespace rcsim {

class RealMonitor {
 public:
  struct Counts {
    int32_t desired = 0;
    int32_t active = 0;
    int32_t running = 0;
    int32_t ready = 0;
    bool operator==(const Counts&) const = default;
  };
  struct Tracked {
    std::string ns, name;
    bool exists = false;
    Counts counts;
    int32_t peak_active = 0;
    Duration peak_at{0};
    std::vector<SeriesPoint> series;
    std::map<std::string, std::vector<std::string>> conditions_seen;  // type -> reasons (status True)
  };
  struct Window {
    std::string key;
    Duration from{0};
    Duration until = Duration::max();
    bool opened = false;
    bool any = false;
    int32_t max_active = 0;
    Duration max_active_at{0};
    int32_t min_ready = 0;
    Duration min_ready_at{0};
  };
  struct Matcher {
    std::string ns;
    Labels selector;
    int32_t active = 0, running = 0, peak_active = 0;
    Duration peak_at{0};
  };

  std::size_t AddWindow(const std::string& ns, const std::string& name, Duration from,
                        std::optional<Duration> until);
  Window GetWindow(std::size_t index, Duration now) const;
  std::size_t AddMatcher(const std::string& ns, Labels selector);
  const Matcher& GetMatcher(std::size_t index) const { return matchers_[index]; }

  // One change at `t` (since the origin). `deleted`: the object is gone (its last state given).
  // Changes older than what was already applied for the same object (by resourceVersion) are
  // ignored, so the harness may apply the answers of its own writes at once and the watch's copies
  // of them later (or the other way round); after a delete, versions up to the deleted one are
  // ignored (a late update does not bring the object back).
  void OnPod(Duration t, const PodPtr& pod, bool deleted);
  void OnController(Duration t, const ControllerPtr& rc, bool deleted);
  // Folds in a complete list of one kind at `t`.
  void ResyncPods(Duration t, const std::vector<PodPtr>& pods);
  void ResyncControllers(Duration t, const std::vector<ControllerPtr>& rcs);

  const Tracked* Find(const std::string& ns, const std::string& name) const;
  Duration last_change() const { return last_change_; }
  uint64_t changes() const { return changes_; }
  const std::vector<SeriesPoint>& totals() const { return totals_; }
  int32_t peak_total_active() const { return peak_total_active_; }

  // The mirrored objects (ground truth once the harness resynced at the end).
  const std::map<std::string, PodPtr>& pods() const { return pods_; }
  const std::map<std::string, ControllerPtr>& controllers() const { return rcs_; }
  // The pods counting for a controller now (see the rule above).
  std::vector<PodPtr> PodsOf(const ReplicationController& rc) const;
  Counts CountsOf(const ReplicationController& rc) const;
  // Every controller ever seen, with its state now.
  std::vector<ControllerOutcome> Outcomes() const;

 private:
  void Refresh(Duration t, const std::string& ns);
  // False when the change is stale for `key` (see OnPod); records it otherwise.
  bool Fresh(const std::string& key, const std::string& resource_version, bool deleted);
  struct Seen {
    int64_t rv = -1;
    bool deleted = false;
  };
  std::map<std::string, Seen> seen_;  // by kind-prefixed key
  void Record(Tracked* t, Duration now, const Counts& before);

  std::map<std::string, PodPtr> pods_;        // by ns/name
  std::map<std::string, ControllerPtr> rcs_;  // by ns/name
  std::map<std::string, Tracked> tracked_;    // by ns/name
  std::vector<Window> windows_;
  std::vector<Matcher> matchers_;
  Duration last_change_{0};
  uint64_t changes_ = 0;
  std::vector<SeriesPoint> totals_;
  int32_t peak_total_active_ = 0;
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_REAL_REAL_MONITOR_H_
