// Counters of the replication manager. Written only on the engine's executor; read them there (or after
// the executor stopped).
#ifndef RCSIM_ENGINE_METRICS_H_
#define RCSIM_ENGINE_METRICS_H_

#include <cstdint>

namespace rcsim {

struct ManagerMetrics {
  uint64_t syncs = 0;        // syncs finished (successful or not)
  uint64_t sync_errors = 0;  // syncs that failed and were requeued with backoff
  uint64_t creates = 0;      // pod creates that succeeded
  uint64_t create_errors = 0;
  uint64_t deletes = 0;  // pod deletes that succeeded (NotFound included)
  uint64_t delete_errors = 0;
  uint64_t adoptions = 0;
  uint64_t releases = 0;
  uint64_t status_updates = 0;     // successful UpdateStatus calls
  uint64_t relists = 0;            // informer lists after the first one (controllers and pods)
  uint64_t malformed_objects = 0;  // store values that did not decode and were skipped
  uint64_t requeues = 0;           // rate-limited re-adds after a failed sync
  uint64_t invalid_controllers = 0;  // syncs refused: the stored controller is invalid (InvalidForSync)
  uint64_t claim_errors = 0;         // adoptions/releases skipped after a permanent error (e.g. 413)
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_METRICS_H_
