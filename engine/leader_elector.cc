#include "engine/leader_elector.h"

#include <algorithm>

namespace rcsim {

Status LeaderElector::Validate(const LeaderElectorOptions& o) {
  if (o.identity.empty()) return Status(Code::kInvalid, "leader election: an identity is required");
  if (o.retry_period <= Duration::zero() || o.retry_period >= o.renew_deadline ||
      o.renew_deadline >= o.lease_duration) {
    return Status(Code::kInvalid, "leader election: need 0 < retry period (" +
                                      FormatDuration(o.retry_period) + ") < renew deadline (" +
                                      FormatDuration(o.renew_deadline) + ") < lease duration (" +
                                      FormatDuration(o.lease_duration) + ")");
  }
  return Status::Ok();
}

LeaderElector::LeaderElector(LeaderElectorOptions options, LeaderLock* lock, Clock* clock, Executor* executor,
                             Logger* logger, Callbacks callbacks)
    : options_(std::move(options)),
      lock_(lock),
      clock_(clock),
      executor_(executor),
      logger_(logger),
      callbacks_(std::move(callbacks)) {}

LeaderElector::~LeaderElector() { Stop(); }

void LeaderElector::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  logger_->Log(LogLevel::kInfo,
               "leader election: " + options_.identity + " attempting to acquire " + lock_->Describe());
  ScheduleAttempt(Duration::zero());
}

void LeaderElector::Stop() {
  if (stopped_) return;
  stopped_ = true;
  alive_.reset();
  if (attempt_timer_ != 0) executor_->Cancel(attempt_timer_);
  if (deadline_timer_ != 0) executor_->Cancel(deadline_timer_);
  attempt_timer_ = deadline_timer_ = 0;
}

void LeaderElector::ScheduleAttempt(Duration delay) {
  if (stopped_) return;
  if (attempt_timer_ != 0) executor_->Cancel(attempt_timer_);
  std::weak_ptr<int> alive = alive_;
  attempt_timer_ = executor_->Schedule(std::max(delay, Duration::zero()), [this, alive] {
    if (alive.expired()) return;
    attempt_timer_ = 0;
    Attempt();
  });
}

void LeaderElector::Attempt() {
  if (stopped_ || in_flight_) return;
  in_flight_ = true;
  const TimePoint sent = clock_->Now();
  std::weak_ptr<int> alive = alive_;
  Executor* executor = executor_;
  lock_->Get([this, alive, executor, sent](Result<LeaderRecord> r) {
    executor->Post([this, alive, sent, r = std::move(r)]() mutable {
      if (alive.expired()) return;
      OnGet(std::move(r), sent);
    });
  });
}

void LeaderElector::Observe(const LeaderRecord& r) {
  const bool changed = !observed_any_ || r.version != observed_.version ||
                       r.holder_identity != observed_.holder_identity || r.renew_time != observed_.renew_time;
  const bool new_holder = !observed_any_ || r.holder_identity != observed_.holder_identity;
  if (changed) observed_time_ = clock_->Now();
  observed_ = r;
  observed_any_ = true;
  if (new_holder && !r.holder_identity.empty()) {
    if (r.holder_identity != options_.identity) {
      logger_->Log(LogLevel::kInfo, "leader election: the leader is " + r.holder_identity);
    }
    if (callbacks_.on_new_leader) callbacks_.on_new_leader(r.holder_identity);
  }
}

void LeaderElector::OnGet(Result<LeaderRecord> r, TimePoint sent) {
  std::weak_ptr<int> alive = alive_;
  Executor* executor = executor_;
  auto on_write = [this, alive, executor, sent](Result<LeaderRecord> w) {
    executor->Post([this, alive, sent, w = std::move(w)]() mutable {
      if (alive.expired()) return;
      OnWrite(std::move(w), sent);
    });
  };
  LeaderRecord next;
  next.holder_identity = options_.identity;
  next.lease_duration = options_.lease_duration;
  next.renew_time = sent;
  if (!r.ok()) {
    if (r.status().code() != Code::kNotFound) {
      in_flight_ = false;
      logger_->Log(LogLevel::kWarning,
                   "leader election: cannot read " + lock_->Describe() + ": " + r.status().ToString());
      ScheduleAttempt(options_.retry_period);
      return;
    }
    next.acquire_time = sent;
    lock_->Create(next, std::move(on_write));
    return;
  }
  Observe(*r);
  const LeaderRecord& cur = *r;
  const bool mine = cur.holder_identity == options_.identity;
  const Duration held_for =
      cur.lease_duration > Duration::zero() ? cur.lease_duration : options_.lease_duration;
  const TimePoint expires = observed_time_ + held_for;
  if (!mine && !cur.holder_identity.empty() && clock_->Now() < expires) {
    in_flight_ = false;
    if (leader_) Lose("the lease is held by " + cur.holder_identity);
    // Try again when the observed record would expire, or sooner to see it renewed.
    ScheduleAttempt(std::min(options_.retry_period, expires - clock_->Now()));
    return;
  }
  next.version = cur.version;
  if (mine) {
    next.acquire_time = cur.acquire_time;
    next.leader_transitions = cur.leader_transitions;
  } else {
    next.acquire_time = sent;
    next.leader_transitions = cur.leader_transitions + 1;
  }
  lock_->Update(next, std::move(on_write));
}

void LeaderElector::OnWrite(Result<LeaderRecord> r, TimePoint sent) {
  in_flight_ = false;
  if (!r.ok()) {
    // Conflict: someone else wrote first (or our own earlier write raced); others: the API is down.
    // A leader keeps trying until its renew deadline passes.
    if (r.status().code() != Code::kConflict && r.status().code() != Code::kAlreadyExists) {
      logger_->Log(LogLevel::kWarning,
                   "leader election: cannot write " + lock_->Describe() + ": " + r.status().ToString());
    }
    ScheduleAttempt(leader_ ? options_.retry_period / 2 : options_.retry_period);
    return;
  }
  if (stopped_) return;
  const TimePoint deadline = sent + options_.renew_deadline;
  if (clock_->Now() >= deadline) {
    // Written, but too late to count: the deadline timer has fired or is about to.
    ScheduleAttempt(options_.retry_period);
    return;
  }
  Observe(*r);
  if (deadline_timer_ != 0) executor_->Cancel(deadline_timer_);
  std::weak_ptr<int> alive = alive_;
  deadline_timer_ = executor_->Schedule(deadline - clock_->Now(), [this, alive] {
    if (alive.expired()) return;
    deadline_timer_ = 0;
    if (leader_) Lose("failed to renew " + lock_->Describe() + " within the renew deadline");
  });
  if (!leader_) {
    leader_ = true;
    logger_->Log(LogLevel::kInfo, "leader election: " + options_.identity + " acquired " + lock_->Describe() +
                                      " (transitions " + std::to_string(r->leader_transitions) + ")");
    if (callbacks_.on_started_leading) callbacks_.on_started_leading();
  }
  ScheduleAttempt(options_.retry_period);
}

void LeaderElector::Lose(const std::string& why) {
  if (!leader_) return;
  leader_ = false;
  if (deadline_timer_ != 0) executor_->Cancel(deadline_timer_);
  deadline_timer_ = 0;
  logger_->Log(LogLevel::kError, "leader election: lost " + lock_->Describe() + ": " + why);
  if (callbacks_.on_stopped_leading) callbacks_.on_stopped_leading();
}

}  // namespace rcsim
