// ReplicationManager2014: the historical baseline. A small re-implementation of the seed's
// ReplicationManager (Kubernetes, June 2014, pkg/registry/replication_controller.go) over rcsim's ports,
// so that the harness can run the 2014 design against the same scenarios as the modern engine and show
// which of them it fails. It is kept deliberately as flawed as the original; nothing in the modern
// engine depends on it.
//
// Behaviour (as the 2014 code behaves):
// - Two loops share one global lock. The resync loop reads every controller straight from the Store
//   (`controllers_prefix`), syncs them one after the other, then waits `resync_period` (10 s) and
//   starts over. The watch loop watches the Store under `controllers_prefix` from "now" and syncs the
//   controller of every "set" (Put) event, one event at a time; later events wait in its channel.
// - A sync takes the lock, lists the controller's pods by label through the API, drops inactive ones,
//   and creates the difference one at a time (each create waits for its reply; errors are logged and
//   ignored) or deletes the first N pods of the list (errors ignored), then releases the lock. No
//   expectations, no ownership (pods carry the template's labels plus replicationController=<name>,
//   no ownerReference), no status writes, no backoff.
// Its flaws, modelled as the 2014 code behaves (never as crashes of rcsim):
// - A failed pod list returns with the lock held: every later sync waits for it forever, so the
//   manager stops syncing for good (lock_leaked()).
// - A Delete event makes the handler dereference a nil controller: the watch loop dies (the panic), its
//   etcd watcher is leaked (still open, nobody reads it), and a new loop starts `watch_restart` (20 s)
//   later, watching from that moment (changes in between are seen only by a resync).
// - The resync syncs the controllers it read at its start: a controller changed meanwhile (a newer watch
//   event already synced) is synced again from the older copy.
// - An ended etcd watch (compaction, connection error) is restarted from "now" after `rewatch_delay`:
//   the changes in between are lost, as util.Forever(Watch, 0) lost them.
//
// Thread-safety: single-threaded. Every entry point, Store watch callback and ApiClient callback must
// run on `executor`'s thread (the simulation's loop). After Stop() (or destruction) no outstanding
// callback touches the manager.
#ifndef RCSIM_BASELINE2014_REPLICATION_MANAGER_2014_H_
#define RCSIM_BASELINE2014_REPLICATION_MANAGER_2014_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/api_client.h"
#include "engine/executor.h"
#include "engine/log.h"
#include "engine/metrics.h"
#include "engine/store.h"
#include "engine/time.h"
#include "engine/trace.h"
#include "engine/types.h"

namespace rcsim {

struct Manager2014Options {
  Duration resync_period = std::chrono::seconds(10);  // Synchronize's sleep between passes
  Duration watch_restart = std::chrono::seconds(20);  // a crashed watch loop starts again after this
  // A real util.Forever(Watch, 0) re-watches at once; the simulation needs time to move.
  Duration rewatch_delay = std::chrono::milliseconds(100);
  std::string controllers_prefix = "/registry/controllers/";
};

// What the 2014 flaws did to this run (also traced as they happen).
struct Manager2014Counters {
  bool lock_leaked = false;         // a failed list left the lock held; nothing syncs any more
  uint64_t watch_crashes = 0;       // Delete events that killed the watch loop (nil controller)
  uint64_t leaked_watches = 0;      // watchers of dead loops, still open
  uint64_t resyncs = 0;             // resync passes started
  uint64_t stale_resync_syncs = 0;  // resync syncs from a copy older than one the watch loop synced
  uint64_t resync_read_errors = 0;  // store reads of the resync that failed
};

class ReplicationManager2014 {
 public:
  // All pointers must outlive the manager.
  ReplicationManager2014(Manager2014Options options, Store* store, ApiClient* api, Clock* clock,
                         Executor* executor, TraceSink* trace, Logger* logger);
  ~ReplicationManager2014();  // Stop()s
  ReplicationManager2014(const ReplicationManager2014&) = delete;
  ReplicationManager2014& operator=(const ReplicationManager2014&) = delete;

  // Starts both loops (the resync loop's first pass runs at once). Call once.
  void Start();
  // Idempotent. Afterwards no callback touches the manager; leaked watches are closed too.
  void Stop();

  // syncs, sync_errors (failed lists), creates, create_errors, deletes, delete_errors; the others stay 0.
  const ManagerMetrics& metrics() const { return metrics_; }
  const Manager2014Counters& counters() const { return counters_; }
  bool lock_held() const { return locked_; }
  // Syncs waiting for the lock (both loops together: at most 2).
  std::size_t lock_waiters() const { return waiters_.size(); }

 private:
  using Done = std::function<void()>;

  void Acquire(Done fn);
  void Release();
  // Syncs one controller under the lock; `done` runs when the sync returns (even with the lock leaked).
  // `revision`: the store mod_revision of this copy of the controller.
  void SyncController(ControllerPtr rc, int64_t revision, bool from_resync, Done done);
  void TraceReadyVictims(const std::string& key, const std::vector<PodPtr>& active, std::size_t n);
  void CreateNext(const ControllerPtr& rc, int remaining, const Done& done);
  void DeleteNext(const ControllerPtr& rc, std::vector<PodPtr> victims, std::size_t next, const Done& done);

  void ResyncPass();
  struct Copy {
    ControllerPtr rc;
    int64_t revision = 0;
  };
  void ResyncEach(const std::shared_ptr<std::vector<Copy>>& rcs, std::size_t i);

  void StartWatchLoop();
  void StartWatch();
  void OnWatchResponse(uint64_t loop, const WatchResponse& resp);
  void PumpWatch();

  void Trace(const std::string& event);
  void Log(LogLevel level, const std::string& message);
  // Runs `fn` only while this manager is alive and not stopped.
  Done Guard(Done fn);

  Manager2014Options options_;
  Store* store_;
  ApiClient* api_;
  Clock* clock_;
  Executor* executor_;
  TraceSink* trace_;
  Logger* logger_;

  std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // callbacks hold weak refs
  bool started_ = false;
  bool stopped_ = false;
  TimerId resync_timer_ = 0;
  TimerId restart_timer_ = 0;  // the crashed watch loop's restart
  TimerId rewatch_timer_ = 0;  // re-watch after the watch ended

  // The global lock (sync.Mutex): held by one sync; waiters are granted it in arrival order.
  bool locked_ = false;
  std::deque<Done> waiters_;

  // The watch loop: its generation (a crashed loop's watcher keeps its old number), its watcher, the
  // events waiting in its channel, and whether it is inside a sync.
  uint64_t watch_loop_ = 0;
  std::unique_ptr<Watch> watch_;
  std::vector<std::unique_ptr<Watch>> leaked_;
  std::deque<WatchEvent> channel_;
  bool watch_busy_ = false;
  bool watch_loop_alive_ = false;
  // mod_revision of the newest copy of each controller ("ns/name") the watch loop synced, to count
  // the resync's syncs from older copies.
  std::map<std::string, int64_t> watch_synced_;

  ManagerMetrics metrics_;
  Manager2014Counters counters_;
};

}  // namespace rcsim

#endif  // RCSIM_BASELINE2014_REPLICATION_MANAGER_2014_H_
