#include "engine/expectations.h"

#include <algorithm>

namespace rcsim {

bool Expectations::Satisfied(const std::string& controller_key) const {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return true;
  const Record& r = it->second;
  if (r.adds <= 0 && r.deletes.empty()) return true;
  return clock_->Now() > r.deadline;
}

void Expectations::ExpectCreations(const std::string& controller_key, int adds) {
  Record& r = records_[controller_key];
  r.adds = adds;
  r.deletes.clear();
  r.deadline = clock_->Now() + timeout_;
}

void Expectations::ExpectDeletions(const std::string& controller_key,
                                   const std::vector<std::string>& pod_keys) {
  Record& r = records_[controller_key];
  r.adds = 0;
  r.deletes = std::set<std::string>(pod_keys.begin(), pod_keys.end());
  r.deadline = clock_->Now() + timeout_;
}

void Expectations::ExpireWithin(const std::string& controller_key, Duration grace) {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return;
  it->second.deadline = std::min(it->second.deadline, clock_->Now() + grace);
}

Duration Expectations::TimeUntilExpiry(const std::string& controller_key) const {
  auto it = records_.find(controller_key);
  if (it == records_.end()) return Duration::zero();
  return std::max(Duration::zero(), it->second.deadline - clock_->Now());
}

void Expectations::CreationObserved(const std::string& controller_key) { LowerCreations(controller_key, 1); }

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
  return it == records_.end() ? 0 : it->second.adds;
}

std::size_t Expectations::PendingDeletes(const std::string& controller_key) const {
  auto it = records_.find(controller_key);
  return it == records_.end() ? 0 : it->second.deletes.size();
}

}  // namespace rcsim
