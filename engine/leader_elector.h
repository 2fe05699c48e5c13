// LeaderElector: client-go's leader election (tools/leaderelection) over a LeaderLock port, so that of
// several managers only one writes. Production locks: a coordination.k8s.io/v1 Lease through the API
// (backends/httpclient/lease_lock.h).
//
// Algorithm (as client-go): every retry_period a candidate reads the record. It takes the lock when
// the record is absent, already its own, or has not changed for lease_duration since this candidate
// first saw its current version (times are this process's own clock: no clock is compared with
// another's); it writes holder=identity, renewTime=now (and acquireTime, leaseTransitions+1 on a
// takeover) with optimistic concurrency, so of two candidates racing at most one write succeeds.
// The leader renews every retry_period.
//
// Safety: a leader that has not completed a renewal sent within the last renew_deadline stops leading
// at once (on_stopped_leading, from a timer, even while a renewal is still in flight). Another candidate
// can take over only lease_duration after it saw the last successful renewal, which came after that
// renewal was sent; with renew_deadline < lease_duration the old leader has stopped first.
// on_stopped_leading must stop every write at once (the controller-manager exits, as
// kube-controller-manager does).
//
// Takeover: a standby schedules its next attempt at the moment the observed record expires, so it takes
// over within lease_duration (+ the time it took to observe the last renewal, at most retry_period)
// after the leader's last renewal.
//
// Thread-safety: single-threaded on `executor`; lock callbacks hop to the executor.
#ifndef RCSIM_ENGINE_LEADER_ELECTOR_H_
#define RCSIM_ENGINE_LEADER_ELECTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "engine/api_client.h"
#include "engine/executor.h"
#include "engine/log.h"
#include "engine/status.h"
#include "engine/time.h"

namespace rcsim {

// What the lock holds (a Lease's spec), plus the version for optimistic concurrency.
struct LeaderRecord {
  std::string holder_identity;
  Duration lease_duration{0};
  std::optional<TimePoint> acquire_time;
  std::optional<TimePoint> renew_time;
  int32_t leader_transitions = 0;
  std::string version;  // opaque (a resourceVersion); set by the lock
  bool operator==(const LeaderRecord&) const = default;
};

// The port. Callbacks may run on any thread.
class LeaderLock {
 public:
  virtual ~LeaderLock() = default;
  // kNotFound when there is no record yet.
  virtual void Get(Callback<Result<LeaderRecord>> done) = 0;
  // kAlreadyExists if one appeared meanwhile.
  virtual void Create(const LeaderRecord& record, Callback<Result<LeaderRecord>> done) = 0;
  // Replaces the record whose version is record.version; kConflict if it changed since.
  virtual void Update(const LeaderRecord& record, Callback<Result<LeaderRecord>> done) = 0;
  // "Lease kube-system/rcsim-controller-manager", for logs.
  virtual std::string Describe() const = 0;
};

struct LeaderElectorOptions {
  std::string identity;  // unique per candidate (hostname_uuid)
  Duration lease_duration = std::chrono::seconds(15);
  Duration renew_deadline = std::chrono::seconds(10);
  Duration retry_period = std::chrono::seconds(2);
};

class LeaderElector {
 public:
  struct Callbacks {
    std::function<void()> on_started_leading;
    std::function<void()> on_stopped_leading;
    std::function<void(const std::string& identity)> on_new_leader;  // every change of the observed holder
  };

  // kInvalid unless 0 < retry_period < renew_deadline < lease_duration and identity is set.
  static Status Validate(const LeaderElectorOptions& options);

  // No pointer is owned; all must outlive the elector.
  LeaderElector(LeaderElectorOptions options, LeaderLock* lock, Clock* clock, Executor* executor,
                Logger* logger, Callbacks callbacks);
  ~LeaderElector();
  LeaderElector(const LeaderElector&) = delete;
  LeaderElector& operator=(const LeaderElector&) = delete;

  void Start();
  // No callback runs afterwards. Does not release the lock (a successor waits lease_duration).
  void Stop();
  bool IsLeader() const { return leader_; }
  const std::string& observed_holder() const { return observed_.holder_identity; }

 private:
  void Attempt();
  void OnGet(Result<LeaderRecord> r, TimePoint sent);
  void OnWrite(Result<LeaderRecord> r, TimePoint sent);
  void ScheduleAttempt(Duration delay);
  void Observe(const LeaderRecord& r);
  void Lose(const std::string& why);

  LeaderElectorOptions options_;
  LeaderLock* lock_;
  Clock* clock_;
  Executor* executor_;
  Logger* logger_;
  Callbacks callbacks_;

  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  bool started_ = false;
  bool stopped_ = false;
  bool leader_ = false;
  bool in_flight_ = false;
  LeaderRecord observed_;  // the last record read or written
  bool observed_any_ = false;
  TimePoint observed_time_{};  // local time `observed_` was first seen in its current version
  TimerId attempt_timer_ = 0;
  TimerId deadline_timer_ =
      0;  // while leading: fires renew_deadline after the last successful renewal was sent
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_LEADER_ELECTOR_H_
