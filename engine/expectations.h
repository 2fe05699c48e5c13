// Controller expectations: what a controller's last sync asked for and has not yet seen in the pod
// informer, so that the next sync does not act on a stale pod list (the 2014 double-creation flaw).
//
// Per controller key: a count of pending creates, the set of pod keys with pending deletes, and when
// they were set. A key is satisfied when it has no record, when everything was observed, or when the
// record is older than `timeout` (events may be lost; the controller then re-lists from its cache).
//
// Thread-safety: none; used on the engine's executor.
#ifndef RCSIM_ENGINE_EXPECTATIONS_H_
#define RCSIM_ENGINE_EXPECTATIONS_H_

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/time.h"

namespace rcsim {

class Expectations {
 public:
  Expectations(const Clock* clock, Duration timeout) : clock_(clock), timeout_(timeout) {}

  bool Satisfied(const std::string& controller_key) const;
  // Sets (replacing any earlier record) `adds` pending creates and restarts the timeout.
  void ExpectCreations(const std::string& controller_key, int adds);
  // Sets (replacing any earlier record) pending deletes of `pod_keys` and restarts the timeout.
  void ExpectDeletions(const std::string& controller_key, const std::vector<std::string>& pod_keys);
  // A pod owned by the controller was seen created (or a create will never happen: failed, skipped).
  void CreationObserved(const std::string& controller_key);
  // `pod_key` was seen deleted (or being deleted), or its delete failed. Unknown pod keys are ignored,
  // so observing the same deletion twice counts once.
  void DeletionObserved(const std::string& controller_key, const std::string& pod_key);
  // Lets the record expire at the latest `grace` from now. For writes whose outcome is unknown (timeouts):
  // if the write was applied the informer observes it well within `grace`; if it was not, the
  // controller acts again after `grace` instead of after the full timeout.
  void ExpireWithin(const std::string& controller_key, Duration grace);
  // How long until the record expires (zero without a record or if already expired).
  Duration TimeUntilExpiry(const std::string& controller_key) const;
  // Lowers pending creates by `adds` (creates that will never happen).
  void LowerCreations(const std::string& controller_key, int adds);
  // Forgets the controller (it was deleted).
  void Delete(const std::string& controller_key) { records_.erase(controller_key); }

  // For tests and traces: pending creates and deletes of a key (0, 0 without record).
  int64_t PendingAdds(const std::string& controller_key) const;
  std::size_t PendingDeletes(const std::string& controller_key) const;

 private:
  struct Record {
    int64_t adds = 0;
    std::set<std::string> deletes;
    TimePoint deadline;  // satisfied after this even if not everything was observed
  };

  const Clock* clock_;
  Duration timeout_;
  std::unordered_map<std::string, Record> records_;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_EXPECTATIONS_H_
