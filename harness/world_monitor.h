// WorldMonitor: the harness's observer of the simulated world. It never shares state with the manager:
// it reads only the world's ground-truth mirror (SimWorld::GetPod / View) on every committed change
// (SimWorld::OnChange), and keeps, per controller, desired / active / running / ready counts, the peak
// of active pods (checked at every intermediate state, for never_above) and a compressed time series.
//
// Counting follows SimWorld::View: a pod counts for a controller when it is in the controller's
// namespace, matches its selector, and is owned by it (controller ownerRef name) or is an orphan.
// Counts are maintained incrementally (O(1) per pod change, O(controllers of the namespace) for an
// orphan); a controller whose selector or existence changes is recounted from View().
//
// Thread-safety: none; runs on the simulation's thread.
#ifndef RCSIM_HARNESS_WORLD_MONITOR_H_
#define RCSIM_HARNESS_WORLD_MONITOR_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/types.h"
#include "fakes/sim_world.h"
#include "harness/run_result.h"

namespace rcsim {

class WorldMonitor {
 public:
  struct Counts {
    int32_t desired = 0;
    int32_t active = 0;
    int32_t running = 0;
    int32_t ready = 0;
    bool operator==(const Counts&) const = default;
  };
  struct Tracked {
    std::string ns;
    std::string name;
    bool exists = false;
    std::string uid;  // pods count for this controller only when owned by this uid (or orphans)
    Labels selector;
    Counts counts;
    int32_t peak_active = 0;
    Duration peak_at{0};
    // For never_above with allow_late_orphans. A pod is the controller's own when it first appeared
    // owned by this uid; a foreign pod (an orphan, adopted or not, or a predecessor's) is "late" when
    // it last became free to adopt (appeared, was orphaned or relabelled) after this uid's first own pod
    // appeared. late_active: active counted pods that are late; peak_own: the peak of active minus
    // late_active.
    std::optional<Duration> first_own_pod_at;
    int32_t late_active = 0;
    int32_t peak_own = 0;
    Duration peak_own_at{0};
    std::vector<SeriesPoint> series;
    Counts recorded;  // the counts as of the last Record (what held since then)
    // Condition types seen with status True, each with the reasons it carried.
    std::map<std::string, std::vector<std::string>> conditions_seen;
  };
  // The extremes of one controller's counts over a window of the run [from, until], every
  // intermediate state included (never_above / never_below with a window).
  struct Window {
    std::string key;  // "ns/name"
    Duration from{0};
    Duration until = Duration::max();
    bool opened = false;  // the state holding at `from` has been folded in
    bool any = false;     // at least one state folded in
    int32_t max_active = 0;
    Duration max_active_at{0};
    int32_t min_ready = 0;
    Duration min_ready_at{0};
  };
  // Pods of a namespace matching a selector, whoever owns them (pods_matching).
  struct Matcher {
    std::string ns;
    Labels selector;
    int32_t active = 0;
    int32_t running = 0;
    int32_t peak_active = 0;
    Duration peak_at{0};
  };

  // Registers with world->OnChange; time 0 of the series is world->loop().Now() at construction.
  explicit WorldMonitor(SimWorld* world);
  WorldMonitor(const WorldMonitor&) = delete;
  WorldMonitor& operator=(const WorldMonitor&) = delete;

  // Null until the controller was first seen.
  const Tracked* Find(const std::string& ns, const std::string& name) const;
  // Registers a window (before the run starts); returns its index for GetWindow.
  std::size_t AddWindow(const std::string& ns, const std::string& name, Duration from,
                        std::optional<Duration> until);
  // The window with the state at the current time folded in (a window no change reached).
  Window GetWindow(std::size_t index) const;
  // Registers a selector (before the run starts, while no pod exists); returns its index.
  std::size_t AddMatcher(const std::string& ns, Labels selector);
  const Matcher& GetMatcher(std::size_t index) const { return matchers_[index]; }
  // Virtual time (since the origin) of the last committed change.
  Duration last_change() const { return last_change_; }
  uint64_t changes() const { return changes_; }
  const std::vector<SeriesPoint>& totals() const { return totals_; }
  int32_t peak_total_active() const { return peak_total_active_; }
  Duration Elapsed() const;

  // Every controller ever seen, sorted by namespace/name, with its end state from View().
  std::vector<ControllerOutcome> Outcomes() const;
  // Self-check: controllers whose incremental counts differ from SimWorld::View now (0 expected
  // whenever the loop has no event due).
  std::vector<std::string> CountMismatches() const;

 private:
  struct PodSeen {
    PodPtr pod;
    std::string creator_uid;  // the controller ownerRef's uid when the pod first appeared ("" none)
    Duration free_since{0};   // when it last appeared, was orphaned or relabelled
  };
  // Whether `pod` counts as late for `t` (see Tracked::late_active).
  static bool Late(const PodSeen& pod, const Tracked& t);
  void OnChange();
  void OnPodChange(const WorldChange& change);
  void OnControllerChange(const WorldChange& change);
  // Calls fn(tracked) for each controller the pod counts for.
  template <typename Fn>
  void ForEachCounter(const Pod& pod, Fn&& fn);
  void Apply(const PodSeen& seen, int sign);
  void Recount(Tracked* t);
  void Touch(Tracked* t);
  void Record(Tracked* t);
  void RecordTotals();

  SimWorld* world_;
  TimePoint origin_;
  Duration last_change_{0};
  uint64_t changes_ = 0;
  std::map<std::string, Tracked> controllers_;     // by "ns/name"
  std::unordered_map<std::string, PodSeen> pods_;  // last state seen, by "ns/name"
  std::vector<Tracked*> touched_;
  Counts totals_now_;
  std::vector<SeriesPoint> totals_;
  int32_t peak_total_active_ = 0;
  std::vector<Window> windows_;
  std::vector<Matcher> matchers_;
};

}  // namespace rcsim

#endif  // RCSIM_HARNESS_WORLD_MONITOR_H_
