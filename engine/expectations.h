// Controller expectations: what a controller's last sync asked for and has not yet seen in the pod
// informer, so that the next sync does not act on a stale pod list (the 2014 double-creation flaw).
//
// Per controller key: a count of pending creates, the set of pod keys with pending deletes, and when
// they were set. A key is satisfied when it has no record, when everything was observed, or when the
// record is older than `timeout` (events may be lost; the controller then re-lists from its cache).
// Writes whose outcome is unknown (timeouts) are pending only for their own grace: a timed-out create
// or delete counts until it is observed or its grace passed, without shortening the wait for the
// writes known to have succeeded.
//
// The manager keys records by controller uid, so a controller recreated under the same name never
// sees its predecessor's record, and a late write of a dead controller's sync cannot touch it.
//
// Thread-safety: none; used on the engine's executor.
#ifndef RCSIM_ENGINE_EXPECTATIONS_H_
#define RCSIM_ENGINE_EXPECTATIONS_H_

#include <cstdint>
#include <map>
#include <optional>
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
  // Lets the whole record expire at the latest `grace` from now.
  void ExpireWithin(const std::string& controller_key, Duration grace);
  // One pending create timed out (it may or may not have been applied): it stays pending until a
  // creation is observed or `grace` from now has passed; the other pending creates keep the record's
  // deadline. Observations lower the creates known to be pending first.
  void CreationOutcomeUnknown(const std::string& controller_key, Duration grace);
  // The pending delete of `pod_key` timed out: it stays pending until its deletion is observed or
  // `grace` from now has passed.
  void DeletionOutcomeUnknown(const std::string& controller_key, const std::string& pod_key, Duration grace);
  // The pod informer re-listed after a gap in its watch: a pod created and deleted during the gap is
  // never observed (a list shows no trace of it), so every create still pending becomes one of unknown
  // outcome, pending until observed or `grace` from now. Returns the keys that had pending creates.
  std::vector<std::string> CreationsUnobservableAfterGap(Duration grace);
  // How long until the key becomes satisfied by time alone (zero if it is satisfied).
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
    int64_t adds = 0;                       // creates known to be pending
    std::multiset<TimePoint> unknown_adds;  // timed-out creates: pending until these deadlines
    // Pending deletes by pod key; a deadline marks a timed-out delete, pending only until then.
    std::map<std::string, std::optional<TimePoint>> deletes;
    TimePoint deadline;  // satisfied after this even if not everything was observed
  };
  // The latest moment at which `r` is still unsatisfied, given the time now.
  static TimePoint PendingUntil(const Record& r, TimePoint now);

  const Clock* clock_;
  Duration timeout_;
  std::unordered_map<std::string, Record> records_;
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_EXPECTATIONS_H_
