#include "engine/expectations.h"

#include <algorithm>

namespace rcsim {

TimePoint Expectations::PendingUntil(const Record& r, TimePoint now) {
  // TimePoint::min() means "not pending at all".
  TimePoint until = TimePoint::min();
  if (r.adds > 0) return r.deadline;
  for (const auto& [pod_key, grace] : r.deletes) {
    if (!grace) return r.deadline;
    until = std::max(until, *grace);
  }
  if (!r.unknown_adds.empty()) until = std::max(until, *r.unknown_adds.rbegin());
  if (until < now) return TimePoint::min();
  return std::min(until, r.deadline);
}

bool Expectations::Satisfied(const std::string& controller_key) const {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return true;
  TimePoint now = clock_->Now();
  TimePoint until = PendingUntil(it->second, now);
  return until == TimePoint::min() || now > until;
}

void Expectations::ExpectCreations(const std::string& controller_key, int adds) {
  Record& r = records_[controller_key];
  r.adds = adds;
  r.unknown_adds.clear();
  r.deletes.clear();
  r.deadline = clock_->Now() + timeout_;
}

void Expectations::ExpectDeletions(const std::string& controller_key,
                                   const std::vector<std::string>& pod_keys) {
  Record& r = records_[controller_key];
  r.adds = 0;
  r.unknown_adds.clear();
  r.deletes.clear();
  for (const std::string& k : pod_keys) r.deletes.emplace(k, std::nullopt);
  r.deadline = clock_->Now() + timeout_;
}

void Expectations::ExpireWithin(const std::string& controller_key, Duration grace) {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return;
  it->second.deadline = std::min(it->second.deadline, clock_->Now() + grace);
}

void Expectations::CreationOutcomeUnknown(const std::string& controller_key, Duration grace) {
  auto it = records_.find(controller_key);
  if (it == records_.end() || it->second.adds <= 0) return;
  --it->second.adds;
  it->second.unknown_adds.insert(clock_->Now() + grace);
}

void Expectations::DeletionOutcomeUnknown(const std::string& controller_key, const std::string& pod_key,
                                          Duration grace) {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return;
  auto d = it->second.deletes.find(pod_key);
  if (d == it->second.deletes.end()) return;
  d->second = clock_->Now() + grace;
}

Duration Expectations::TimeUntilExpiry(const std::string& controller_key) const {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return Duration::zero();
  TimePoint now = clock_->Now();
  TimePoint until = PendingUntil(it->second, now);
  if (until == TimePoint::min()) return Duration::zero();
  return std::max(Duration::zero(), until - now);
}

void Expectations::CreationObserved(const std::string& controller_key) {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return;
  if (it->second.adds > 0) {
    --it->second.adds;
  } else if (!it->second.unknown_adds.empty()) {
    it->second.unknown_adds.erase(it->second.unknown_adds.begin());
  }
}

std::vector<std::string> Expectations::CreationsUnobservableAfterGap(Duration grace) {
  std::vector<std::string> keys;
  const TimePoint until = clock_->Now() + grace;
  for (auto& [key, r] : records_) {
    if (r.adds <= 0) continue;
    for (; r.adds > 0; --r.adds) r.unknown_adds.insert(until);
    keys.push_back(key);
  }
  std::sort(keys.begin(), keys.end());  // records_ is unordered: callers act in a stable order
  return keys;
}

void Expectations::LowerCreations(const std::string& controller_key, int adds) {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return;
  it->second.adds -= adds;
  if (it->second.adds < 0) it->second.adds = 0;
}

void Expectations::DeletionObserved(const std::string& controller_key, const std::string& pod_key) {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return;
  it->second.deletes.erase(pod_key);
}

int64_t Expectations::PendingAdds(const std::string& controller_key) const {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return 0;
  return it->second.adds + static_cast<int64_t>(it->second.unknown_adds.size());
}

std::size_t Expectations::PendingDeletes(const std::string& controller_key) const {
  auto it = records_.find(controller_key);
  return it == records_.end() ? 0 : it->second.deletes.size();
}

}  // namespace rcsim
