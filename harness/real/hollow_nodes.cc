#include "harness/real/hollow_nodes.h"

#include <vector>

#include "engine/mutex.h"

namespace rcsim {

using SteadyClock = std::chrono::steady_clock;

HollowNodes::HollowNodes(ApiClient* api, Duration start_min, Duration start_max, uint64_t seed)
    : api_(api), start_min_(start_min), start_max_(std::max(start_min, start_max)), rng_(seed) {}

HollowNodes::~HollowNodes() { Stop(); }

void HollowNodes::Start() {
  Watch();
  timer_ = std::thread([this] { TimerLoop(); });
}

void HollowNodes::Stop() {
  {
    MutexLock lock(mu_);
    if (stopping_) return;
    stopping_ = true;
    cv_.NotifyAll();
  }
  if (timer_.joinable()) timer_.join();
  watch_.reset();
}

uint64_t HollowNodes::started_pods() const {
  MutexLock lock(mu_);
  return started_;
}

void HollowNodes::Watch() {
  watch_ = api_->pods().Watch("", ListOptions{}, "", [this](const ApiWatchEvent<Pod>& e) { OnEvent(e); });
}

void HollowNodes::OnEvent(const ApiWatchEvent<Pod>& e) {
  MutexLock lock(mu_);
  if (e.type == ApiWatchEvent<Pod>::Type::kError) {
    rewatch_ = true;
    cv_.NotifyAll();
    return;
  }
  if (e.type != ApiWatchEvent<Pod>::Type::kAdded || !e.object) return;
  const Pod& p = *e.object;
  if (p.status.phase != "Pending" || p.metadata.deletion_timestamp) return;
  if (!seen_.insert(p.metadata.uid).second) return;
  const auto span = (start_max_ - start_min_).count();
  const Duration d =
      start_min_ + Duration(span > 0 ? static_cast<Duration::rep>(rng_() % static_cast<uint64_t>(span)) : 0);
  due_.emplace(SteadyClock::now() + d, e.object);
  cv_.NotifyAll();
}

void HollowNodes::TimerLoop() {
  MutexLock lock(mu_);
  while (!stopping_) {
    if (rewatch_) {
      rewatch_ = false;
      lock.Unlock();
      watch_.reset();
      Watch();
      lock.Lock();
      continue;
    }
    const auto now = SteadyClock::now();
    std::vector<PodPtr> ready;
    while (!due_.empty() && due_.begin()->first <= now) {
      ready.push_back(due_.begin()->second);
      due_.erase(due_.begin());
    }
    if (ready.empty()) {
      auto wake = due_.empty() ? now + std::chrono::seconds(1) : due_.begin()->first;
      cv_.WaitUntil(mu_, wake);
      continue;
    }
    started_ += ready.size();
    lock.Unlock();
    const TimePoint t =
        std::chrono::time_point_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now());
    for (const PodPtr& p : ready) {
      Pod pod = *p;
      pod.metadata.resource_version.clear();  // unconditional: only .status is written
      pod.status.phase = "Running";
      pod.status.start_time = t;
      pod.status.host_ip = "127.0.0.1";
      pod.status.pod_ip = "10.0.0.1";
      pod.status.conditions.clear();
      PodCondition ready_condition;
      ready_condition.type = "Ready";
      ready_condition.status = "True";
      ready_condition.last_transition_time = t;
      pod.status.conditions.push_back(ready_condition);
      api_->pods().UpdateStatus(std::move(pod), [](const Result<PodPtr>&) {});
    }
    lock.Lock();
  }
}

}  // namespace rcsim
