// The API server's logic for coordination.k8s.io/v1 Leases over a Store, beside registry.h's pods and
// controllers (leader election and node heartbeats write them).
//
// Layout: /registry/leases/<namespace>/<name>, the Lease as JSON bytes without resourceVersion (the
// key's mod_revision is the resourceVersion of every object returned), as kube-apiserver stores it.
//
// Semantics (as kube-apiserver): Create assigns uid and creationTimestamp and fails with kAlreadyExists
// if the name is taken; Update has PUT semantics with optimistic concurrency (a non-empty stale
// metadata.resourceVersion gives kConflict, an empty one is unconditional), keeps uid and
// creationTimestamp, and writes nothing when nothing changed; Delete honours uid / resourceVersion
// preconditions. Names must be DNS-1123 subdomains; leaseDurationSeconds, when set, must be positive;
// leaseTransitions must not be negative (kInvalid).
//
// Thread-safety: every method may be called from any thread concurrently.
#ifndef RCSIM_REGISTRY_LEASE_REGISTRY_H_
#define RCSIM_REGISTRY_LEASE_REGISTRY_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/api_client.h"
#include "engine/lease.h"
#include "engine/mutex.h"
#include "engine/status.h"
#include "engine/store.h"
#include "registry/registry.h"

namespace rcsim {

class LeaseRegistry {
 public:
  // Not owned; must outlive the registry. `ctx` gives the store, the clock and uids (the API server
  // gives the leases a context of their own over the same store).
  explicit LeaseRegistry(RegistryContext* ctx) : ctx_(ctx) {}

  Result<LeasePtr> Get(const std::string& ns, const std::string& name);
  // ns "" lists every namespace, in key order; resource_version is the revision read at.
  Result<ObjectList<Lease>> List(const std::string& ns);
  // As List, only the leases matching `opts`' label selector and metadata.name (field_name); any other
  // field selector but metadata.namespace is kBadRequest, as kube-apiserver answers for leases.
  Result<ObjectList<Lease>> List(const std::string& ns, const ListOptions& opts);
  // Watches the leases of `ns` ("" = all) matching `opts` (as List): from resource_version, or, when it
  // is "" or "0", an ADDED event per lease listed first. Each object is the lease as Get gives it (a
  // deleted one: its last state, at the deletion's revision); a value that does not decode is skipped.
  // The watch ends with a kError event: kGone for a compacted resource_version, kInternal when the
  // store ends it. on_event runs on the store's watch thread (before Watch returns for the listed
  // leases), in order. The watch must not outlive the registry (it decodes through its cache).
  Result<std::unique_ptr<RegistryWatch>> Watch(const std::string& ns, const ListOptions& opts,
                                               const std::string& resource_version,
                                               std::function<void(const ApiWatchEvent<Lease>&)> on_event);
  // As above, as the HTTP server writes it: {"type", "object"} JSON per event, and the error as an
  // ERROR event with a Status object (410 Expired after a compaction), followed by on_end.
  Result<std::unique_ptr<RegistryWatch>> Watch(const std::string& ns, const ListOptions& opts,
                                               const std::string& resource_version,
                                               std::function<void(const nlohmann::json& event)> on_event,
                                               std::function<void()> on_end);
  Result<LeasePtr> Create(const std::string& ns, Lease lease);
  Result<LeasePtr> Update(const Lease& lease);
  Result<LeasePtr> Delete(const std::string& ns, const std::string& name, const DeleteOptions& opts);

 private:
  // The decoded lease of `kv`, from the decode cache when it holds this key at this revision with these
  // bytes. Node agents renew their leases every few seconds and the node lifecycle controller reads
  // all of them as often: without the cache every read decoded every lease's JSON again.
  Result<LeasePtr> FromKv(const KeyValue& kv);
  // Keeps `lease` as what `value` at `mod_revision` holds: decoded by a read, or written by this
  // registry (a write's result is what later reads and watches return).
  void Remember(const std::string& key, int64_t mod_revision, const Value& value, const LeasePtr& lease);

  struct Decoded {
    int64_t mod_revision = 0;
    // Compared on a hit too (a store that lost its data reuses revisions): the same value, as the
    // in-memory store gives back what was put, or equal bytes.
    Value value;
    LeasePtr lease;
  };
  static constexpr std::size_t kMaxDecoded = 65536;  // past it the cache starts over

  RegistryContext* const ctx_;
  Mutex decoded_mu_;
  std::unordered_map<std::string, Decoded> decoded_ GUARDED_BY(decoded_mu_);  // by key
};

std::string LeaseKey(std::string_view ns, std::string_view name);
std::string LeasePrefix(std::string_view ns);  // "/registry/leases/" for ns ""

}  // namespace rcsim

#endif  // RCSIM_REGISTRY_LEASE_REGISTRY_H_
