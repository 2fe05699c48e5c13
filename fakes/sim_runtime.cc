#include "fakes/sim_runtime.h"

#include <utility>
#include <vector>

namespace rcsim {

SimRuntime::SimRuntime(SimRuntimeOptions options, Executor* executor, Rng* rng, std::string prefix)
    : options_(options), executor_(executor), rng_(rng), prefix_(std::move(prefix)) {}

SimRuntime::~SimRuntime() { *alive_ = false; }

void SimRuntime::SetExitListener(ExitListener listener) { listener_ = std::move(listener); }

void SimRuntime::SetReadinessListener(ReadinessListener listener) {
  readiness_listener_ = std::move(listener);
}

bool SimRuntime::Ready(const std::string& id) const {
  auto it = running_.find(id);
  return it != running_.end() && not_ready_.count(it->second.pod_uid) == 0;
}

int SimRuntime::SetReady(const std::string& pod_uid, bool ready) {
  const bool was_ready = not_ready_.count(pod_uid) == 0;
  if (ready) {
    not_ready_.erase(pod_uid);
  } else {
    not_ready_.insert(pod_uid);
  }
  if (was_ready == ready || failed_) return 0;
  std::vector<std::string> ids;
  for (const auto& [id, r] : running_) {
    if (r.pod_uid == pod_uid && !r.stopping) ids.push_back(id);
  }
  // Reported from the executor, as every runtime callback (never inline in the caller).
  if (!ids.empty()) {
    // What holds when the report runs (a later SetReady of the same instant wins).
    executor_->Post([this, alive = alive_, ids] {
      if (!*alive || failed_ || !readiness_listener_) return;
      for (const std::string& id : ids) {
        if (running_.count(id)) readiness_listener_(id, Ready(id));
      }
    });
  }
  return static_cast<int>(ids.size());
}

void SimRuntime::Start(const ContainerConfig& config, Callback<Result<std::string>> done) {
  const Duration delay = rng_->Uniform(options_.start_min, options_.start_max);
  const std::string id = prefix_ + "-" + std::to_string(++next_id_);
  const std::string uid = config.pod_uid;
  const uint64_t epoch = epoch_;
  executor_->Schedule(delay, [this, alive = alive_, id, uid, epoch, done = std::move(done)]() mutable {
    if (!*alive) return;
    if (failed_ || epoch != epoch_) return;  // a dead node answers nothing
    Running r;
    r.pod_uid = uid;
    if (crash_looping_.count(uid)) {
      r.crash_timer = executor_->Schedule(options_.crash_after, [this, alive, id] {
        if (*alive && !failed_) ExitNow(id, 1);
      });
    }
    running_.emplace(id, r);
    done(id);
  });
}

void SimRuntime::ExitNow(const std::string& id, int code) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  if (it->second.crash_timer != 0) executor_->Cancel(it->second.crash_timer);
  running_.erase(it);
  if (listener_) listener_(id, code);
}

void SimRuntime::Stop(const std::string& id, Duration grace, Callback<Status> done) {
  auto it = running_.find(id);
  if (it == running_.end() || failed_) {
    if (!failed_) executor_->Post([done = std::move(done)] { done(Status::Ok()); });
    return;
  }
  it->second.stopping = true;
  const bool killed = options_.term_latency > grace;
  const Duration delay = killed ? grace : options_.term_latency;
  const uint64_t epoch = epoch_;
  executor_->Schedule(delay, [this, alive = alive_, id, killed, epoch, done = std::move(done)] {
    if (!*alive || failed_ || epoch != epoch_) return;
    ExitNow(id, killed ? 137 : 143);
    done(Status::Ok());
  });
}

int SimRuntime::Exit(const std::string& pod_uid, int exit_code) {
  if (failed_) return 0;
  std::vector<std::string> ids;
  for (const auto& [id, r] : running_) {
    if (r.pod_uid == pod_uid && !r.stopping) ids.push_back(id);
  }
  for (const std::string& id : ids) ExitNow(id, exit_code);
  return static_cast<int>(ids.size());
}

void SimRuntime::CrashLoop(const std::string& pod_uid, bool on) {
  if (on) {
    crash_looping_.insert(pod_uid);
  } else {
    crash_looping_.erase(pod_uid);
  }
}

void SimRuntime::Fail() {
  if (failed_) return;
  failed_ = true;
  ++epoch_;
  for (auto& [id, r] : running_) {
    if (r.crash_timer != 0) executor_->Cancel(r.crash_timer);
    r.crash_timer = 0;
  }
}

void SimRuntime::Recover() {
  if (!failed_) return;
  failed_ = false;
  // The node rebooted: what ran is gone.
  std::vector<std::string> ids;
  for (const auto& [id, r] : running_) ids.push_back(id);
  for (const std::string& id : ids) ExitNow(id, 137);
}

}  // namespace rcsim
