#include "baseline2014/replication_manager_2014.h"

#include <utility>

#include "engine/codec.h"
#include "engine/labels.h"

namespace rcsim {
namespace {

// The label the 2014 createReplica added to every pod it made.
constexpr const char kControllerLabel[] = "replicationController";

// The controller's selector as the 2014 code used it (DesiredState.ReplicasInSet). rcsim's API defaults
// an empty selector to the template's labels; with neither, the empty selector lists every pod, as
// labels.Set{}.AsSelector() did.
Labels SelectorOf(const ReplicationController& rc) {
  if (!rc.spec.selector.empty()) return rc.spec.selector;
  if (rc.spec.template_) return rc.spec.template_->metadata.labels;
  return {};
}

// createReplica: the template's labels (plus replicationController=<name>) and spec; no owner.
Pod PodFor(const ReplicationController& rc) {
  Pod pod;
  pod.metadata.namespace_ = rc.metadata.namespace_;
  pod.metadata.generate_name = rc.metadata.name + "-";
  if (rc.spec.template_) {
    pod.metadata.labels = rc.spec.template_->metadata.labels;
    pod.metadata.annotations = rc.spec.template_->metadata.annotations;
    pod.spec = rc.spec.template_->spec;
  }
  pod.metadata.labels[kControllerLabel] = rc.metadata.name;
  return pod;
}

ControllerPtr DecodeValue(const Value& value) {
  if (ControllerPtr rc = value.controller()) return rc;
  Result<ReplicationController> decoded = DecodeController(value.bytes());
  if (!decoded.ok()) return nullptr;
  return std::make_shared<const ReplicationController>(std::move(decoded).value());
}

}  // namespace

ReplicationManager2014::ReplicationManager2014(Manager2014Options options, Store* store, ApiClient* api,
                                               Clock* clock, Executor* executor, TraceSink* trace,
                                               Logger* logger)
    : options_(std::move(options)),
      store_(store),
      api_(api),
      clock_(clock),
      executor_(executor),
      trace_(trace),
      logger_(logger) {}

ReplicationManager2014::~ReplicationManager2014() { Stop(); }

void ReplicationManager2014::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  // controller-manager: `go Synchronize()` and `go WatchControllers()`.
  executor_->Post(Guard([this] { ResyncPass(); }));
  StartWatchLoop();
}

void ReplicationManager2014::Stop() {
  if (stopped_) return;
  stopped_ = true;
  alive_.reset();
  for (TimerId id : {resync_timer_, restart_timer_, rewatch_timer_}) {
    if (id != 0) executor_->Cancel(id);
  }
  watch_.reset();
  leaked_.clear();
  channel_.clear();
  waiters_.clear();
}

ReplicationManager2014::Done ReplicationManager2014::Guard(Done fn) {
  std::weak_ptr<int> alive = alive_;
  return [alive, fn = std::move(fn)] {
    if (!alive.expired()) fn();
  };
}

void ReplicationManager2014::Trace(const std::string& event) { trace_->Record("manager", event); }

void ReplicationManager2014::Log(LogLevel level, const std::string& message) {
  if (logger_ != nullptr) logger_->Log(level, message);
}

// ---- The global lock ----

void ReplicationManager2014::Acquire(Done fn) {
  if (!locked_) {
    locked_ = true;
    executor_->Post(Guard(std::move(fn)));
    return;
  }
  waiters_.push_back(std::move(fn));
}

void ReplicationManager2014::Release() {
  if (waiters_.empty()) {
    locked_ = false;
    return;
  }
  // Handed over: the lock stays held by the next waiter.
  Done next = std::move(waiters_.front());
  waiters_.pop_front();
  executor_->Post(Guard(std::move(next)));
}

// ---- syncReplicationController ----

void ReplicationManager2014::SyncController(ControllerPtr rc, int64_t revision, bool from_resync, Done done) {
  // Observation only (the 2014 code logged nothing here): a sync queued behind another controller's.
  if (locked_ && trace_->enabled()) Trace("sync " + KeyOf(rc->metadata) + " waits for the global lock");
  Acquire([this, rc = std::move(rc), revision, from_resync, done = std::move(done)] {
    const std::string key = KeyOf(rc->metadata);
    auto seen = watch_synced_.find(key);
    if (from_resync) {
      if (seen != watch_synced_.end() && seen->second > revision) {
        ++counters_.stale_resync_syncs;
        if (trace_->enabled()) {
          Trace("resync " + key + " from revision " + std::to_string(revision) + ", older than the watch's " +
                std::to_string(seen->second));
        }
      }
    } else if (seen == watch_synced_.end() || seen->second < revision) {
      watch_synced_[key] = revision;
    }
    ListOptions opts;
    opts.label_selector = LabelSelector::FromMap(SelectorOf(*rc));
    std::weak_ptr<int> alive = alive_;
    api_->pods().List(rc->metadata.namespace_, opts, [this, alive, rc, key, done](Result<ObjectList<Pod>> r) {
      if (alive.expired()) return;
      if (!r.ok()) {
        // `return err` before Unlock(): the lock is never released.
        ++metrics_.sync_errors;
        counters_.lock_leaked = true;
        Trace("sync " + key + " list failed: " + r.status().ToString() + "; returns with the lock held");
        Log(LogLevel::kError, "Error synchronizing: " + r.status().ToString());
        done();
        return;
      }
      std::vector<PodPtr> active;
      for (const PodPtr& p : r->items) {
        if (IsActive(*p)) active.push_back(p);
      }
      const int64_t diff = static_cast<int64_t>(active.size()) - rc->spec.replicas;
      if (trace_->enabled()) {
        Trace("sync " + key + " active=" + std::to_string(active.size()) + " desired=" +
              std::to_string(rc->spec.replicas) + (diff < 0 ? " creating " + std::to_string(-diff) : "") +
              (diff > 0 ? " deleting " + std::to_string(diff) : ""));
      }
      Done finish = [this, done] {
        ++metrics_.syncs;
        Release();
        done();
      };
      if (diff < 0) {
        CreateNext(rc, static_cast<int>(-diff), finish);
      } else if (diff > 0) {
        if (trace_->enabled()) TraceReadyVictims(key, active, static_cast<std::size_t>(diff));
        active.resize(static_cast<std::size_t>(diff));  // the first N of the list
        DeleteNext(rc, std::move(active), 0, finish);
      } else {
        finish();
      }
    });
  });
}

// Observation only: the first N of the list include a ready pod while a pod that is not ready stays
// (today's controller would delete the not-ready one first).
void ReplicationManager2014::TraceReadyVictims(const std::string& key, const std::vector<PodPtr>& active,
                                               std::size_t n) {
  const PodPtr* kept_unready = nullptr;
  for (std::size_t i = n; i < active.size() && kept_unready == nullptr; ++i) {
    if (!IsReady(*active[i])) kept_unready = &active[i];
  }
  if (kept_unready == nullptr) return;
  for (std::size_t i = 0; i < n; ++i) {
    if (IsReady(*active[i])) {
      Trace("sync " + key + " deletes the first " + std::to_string(n) + " of the list: ready " +
            KeyOf(active[i]->metadata) + " goes while " + KeyOf((*kept_unready)->metadata) + " is not ready");
      return;
    }
  }
}

void ReplicationManager2014::CreateNext(const ControllerPtr& rc, int remaining, const Done& done) {
  if (remaining == 0) {
    done();
    return;
  }
  std::weak_ptr<int> alive = alive_;
  Pod pod = PodFor(*rc);
  const std::string ns = rc->metadata.namespace_;
  api_->pods().Create(ns, std::move(pod), [this, alive, rc, remaining, done](Result<PodPtr> r) {
    if (alive.expired()) return;
    if (r.ok()) {
      ++metrics_.creates;
      if (trace_->enabled()) Trace("created " + KeyOf((*r)->metadata) + " for " + KeyOf(rc->metadata));
    } else {
      // glog.Errorf and carry on: the error is not returned to anyone.
      ++metrics_.create_errors;
      if (trace_->enabled())
        Trace("create failed for " + KeyOf(rc->metadata) + " (ignored): " + r.status().ToString());
      Log(LogLevel::kError, "create failed: " + r.status().ToString());
    }
    CreateNext(rc, remaining - 1, done);
  });
}

void ReplicationManager2014::DeleteNext(const ControllerPtr& rc, std::vector<PodPtr> victims,
                                        std::size_t next, const Done& done) {
  if (next == victims.size()) {
    done();
    return;
  }
  std::weak_ptr<int> alive = alive_;
  const PodPtr victim = victims[next];
  api_->pods().Delete(
      victim->metadata.namespace_, victim->metadata.name, DeleteOptions{},
      [this, alive, rc, victims = std::move(victims), next, done](const Result<PodPtr>& r) mutable {
        if (alive.expired()) return;
        const std::string pod_key = KeyOf(victims[next]->metadata);
        if (r.ok() || r.status().code() == Code::kNotFound) {
          ++metrics_.deletes;
          if (trace_->enabled()) Trace("deleted " + pod_key + " for " + KeyOf(rc->metadata));
        } else {
          ++metrics_.delete_errors;  // the returned error is dropped by the caller
          if (trace_->enabled()) {
            Trace("delete failed " + pod_key + " for " + KeyOf(rc->metadata) +
                  " (ignored): " + r.status().ToString());
          }
        }
        DeleteNext(rc, std::move(victims), next + 1, done);
      });
}

// ---- Synchronize: the resync loop ----

void ReplicationManager2014::ResyncPass() {
  resync_timer_ = 0;
  ++counters_.resyncs;
  Result<RangeResponse> r = store_->GetPrefix(options_.controllers_prefix);
  if (!r.ok()) {
    ++counters_.resync_read_errors;
    Trace("resync: reading controllers failed: " + r.status().ToString());
    Log(LogLevel::kError, "Synchronization error " + r.status().ToString());
    resync_timer_ = executor_->Schedule(options_.resync_period, Guard([this] { ResyncPass(); }));
    return;
  }
  auto copies = std::make_shared<std::vector<Copy>>();
  for (const KeyValue& kv : r->kvs) {
    ControllerPtr rc = DecodeValue(kv.value);
    if (!rc) {
      ++metrics_.malformed_objects;
      Log(LogLevel::kError, "Unexpected error decoding " + kv.key);
      continue;
    }
    copies->push_back(Copy{std::move(rc), kv.mod_revision});
  }
  ResyncEach(copies, 0);
}

void ReplicationManager2014::ResyncEach(const std::shared_ptr<std::vector<Copy>>& copies, std::size_t i) {
  if (i == copies->size()) {
    resync_timer_ = executor_->Schedule(options_.resync_period, Guard([this] { ResyncPass(); }));
    return;
  }
  const Copy& c = (*copies)[i];
  SyncController(c.rc, c.revision, true, [this, copies, i] { ResyncEach(copies, i + 1); });
}

// ---- WatchControllers: the watch loop ----

void ReplicationManager2014::StartWatchLoop() {
  restart_timer_ = 0;
  ++watch_loop_;
  watch_loop_alive_ = true;
  watch_busy_ = false;
  channel_.clear();
  if (watch_loop_ > 1)
    Trace("watch loop restarts (" + std::to_string(counters_.leaked_watches) + " watchers leaked)");
  StartWatch();
}

void ReplicationManager2014::StartWatch() {
  rewatch_timer_ = 0;
  WatchRequest req;
  req.key = options_.controllers_prefix;
  req.range_end = PrefixEnd(options_.controllers_prefix);
  req.start_revision = 0;  // waitIndex 0: from now on
  std::weak_ptr<int> alive = alive_;
  const uint64_t loop = watch_loop_;
  watch_ = store_->StartWatch(req, [this, alive, loop](const WatchResponse& resp) {
    if (!alive.expired()) OnWatchResponse(loop, resp);
  });
  if (!watch_) {
    rewatch_timer_ = executor_->Schedule(options_.rewatch_delay, Guard([this] { StartWatch(); }));
  }
}

void ReplicationManager2014::OnWatchResponse(uint64_t loop, const WatchResponse& resp) {
  // A dead loop's watcher still receives; nobody reads its channel.
  if (loop != watch_loop_ || !watch_loop_alive_) return;
  if (resp.canceled) {
    if (rewatch_timer_ != 0) return;
    Trace("controller watch ended (" +
          (resp.compact_revision > 0 ? std::string("compacted") : resp.status.ToString()) +
          "); watching again from now");
    rewatch_timer_ = executor_->Schedule(options_.rewatch_delay, Guard([this, loop] {
                                           rewatch_timer_ = 0;
                                           if (loop != watch_loop_ || !watch_loop_alive_) return;
                                           watch_.reset();
                                           StartWatch();
                                         }));
    return;
  }
  for (const WatchEvent& ev : resp.events) channel_.push_back(ev);
  PumpWatch();
}

void ReplicationManager2014::PumpWatch() {
  while (watch_loop_alive_ && !watch_busy_ && !channel_.empty()) {
    WatchEvent ev = std::move(channel_.front());
    channel_.pop_front();
    if (ev.type == WatchEvent::Type::kDelete) {
      // handleWatchResponse returns (nil, nil) for anything but "set"; the loop dereferences the nil
      // controller and the goroutine dies. Its etcd watcher stays open, blocked on a channel nobody
      // reads; a new loop starts later.
      ++counters_.watch_crashes;
      ++counters_.leaked_watches;
      watch_loop_alive_ = false;
      channel_.clear();
      if (rewatch_timer_ != 0) {
        executor_->Cancel(rewatch_timer_);
        rewatch_timer_ = 0;
      }
      if (watch_) leaked_.push_back(std::move(watch_));
      Trace("watch loop died: nil controller for the delete of " + ev.kv.key + "; restarts in " +
            FormatDuration(options_.watch_restart) + ", its watcher leaked");
      Log(LogLevel::kError, "watch loop: nil pointer dereference on delete of " + ev.kv.key);
      restart_timer_ = executor_->Schedule(options_.watch_restart, Guard([this] { StartWatchLoop(); }));
      return;
    }
    ControllerPtr rc = DecodeValue(ev.kv.value);
    if (!rc) {
      ++metrics_.malformed_objects;
      Log(LogLevel::kError, "Error handling data: " + ev.kv.key);
      continue;
    }
    watch_busy_ = true;
    const uint64_t loop = watch_loop_;
    SyncController(std::move(rc), ev.kv.mod_revision, false, [this, loop] {
      if (loop != watch_loop_) return;
      watch_busy_ = false;
      PumpWatch();
    });
  }
}

}  // namespace rcsim
