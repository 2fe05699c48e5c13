// The Store port: an etcd v3 key-value store with MVCC revisions, transactions, watch, compaction and
// leases. Implemented by the in-memory etcd (fakes/mem_store.h) and the real etcd client
// (backends/etcd_store.h); one contract suite (tests/contract/store_contract.h) runs against both.
//
// Semantics (as observed on a real etcd 3.4):
// - An empty store is at revision 1; the first write gets revision 2. Each successful Put, DeleteRange
//   that deleted at least one key, or Txn containing a write adds exactly 1 to the revision (all ops of
//   one Txn share it). Deleting a missing key, a read-only Txn, a Txn whose compare failed and took a
//   read-only branch, LeaseGrant and Compact add nothing.
// - Per key: create_revision (revision of the put that created it), mod_revision (last write), version
//   (1 on creation, +1 on every put, even of an identical value; a delete then re-create starts at 1).
// - Range over [key, range_end): range_end empty means the single key `key`; PrefixEnd(p) gives the end
//   of the prefix p. revision 0 means "latest"; a revision below the compact revision fails with
//   kCompacted; above the current one fails with kFutureRevision. limit 0 means no limit; `more` says
//   whether keys were left out by the limit; `count` is the total number of keys in range.
// - Watch from start_revision (0 = current revision + 1) delivers every event with
//   mod_revision >= start_revision in revision order, the events of one revision in one WatchResponse.
//   DELETE events carry only the key and the deleting revision in `kv` (value empty, versions 0), plus
//   prev_kv when requested. If start_revision is below the compact revision, the watch is cancelled
//   at once with compact_revision set; the caller re-lists and watches from the list's revision + 1.
// - Leases: keys put with a lease are deleted (one revision per expiry, like a delete) when the lease
//   expires or is revoked. Expiry is driven by the Clock the implementation was built with.
//
// Thread-safety: implementations are thread-safe. Watch callbacks may run on any thread, never inline
// inside Watch(); callbacks of one watch are never concurrent and arrive in order. The Watch object
// cancels on destruction; after its destructor returns no further callback runs.
#ifndef RCSIM_ENGINE_STORE_H_
#define RCSIM_ENGINE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/status.h"
#include "engine/types.h"

namespace rcsim {

struct Event;  // engine/event.h
struct Lease;  // engine/lease.h

// An immutable stored value: bytes, or a typed object that is encoded to bytes lazily and at most once
// (the simulation passes typed objects through the in-memory etcd without any JSON round trip).
// Copying a Value is cheap (a shared pointer). bytes() is thread-safe.
class Value {
 public:
  Value();
  explicit Value(std::string bytes);
  explicit Value(const char* bytes) : Value(std::string(bytes)) {}
  explicit Value(PodPtr pod);
  explicit Value(ControllerPtr controller);
  // An event as EventToJson gives it (the events registry's typed write): its bytes are encoded when
  // first asked for, so an event no one reads is never encoded.
  explicit Value(std::shared_ptr<const Event> event);
  // A lease as the lease registry stores it (no resourceVersion): its bytes are encoded when first
  // asked for, so the in-memory etcd never encodes the node agents' renewals.
  explicit Value(std::shared_ptr<const Lease> lease);

  // A typed value that a store keeping typed values (the in-memory etcd) stamps with the revision it
  // commits it at, as its metadata.resourceVersion, under the store's lock and so before any reader
  // can see it. Readers then get the object already carrying its version, with no copy (the registry
  // would otherwise copy every object it serves to set it). Only for a fresh object that no one else
  // reads. Stamped only once: a value written twice keeps its first revision. bytes() never include
  // the stamp (stored bytes hold no resourceVersion).
  static Value Stampable(std::shared_ptr<Pod> pod);
  static Value Stampable(std::shared_ptr<ReplicationController> controller);
  // Stamps a Stampable value (see above); a no-op for any other value and after the first call.
  // Stores call it while holding the lock that publishes the value.
  void StampRevision(int64_t revision) const;

  const std::string& bytes() const;
  // The typed object this value was built from, or null when it was built from bytes.
  const PodPtr& pod() const;
  const ControllerPtr& controller() const;
  const std::shared_ptr<const Event>& event() const;
  const std::shared_ptr<const Lease>& lease() const;
  // Equal bytes. One value (a Put's, as the in-memory store gives it back) equals itself without
  // encoding either side.
  bool operator==(const Value& other) const { return rep_ == other.rep_ || bytes() == other.bytes(); }

 private:
  struct Rep;
  std::shared_ptr<Rep> rep_;
};

struct KeyValue {
  std::string key;
  Value value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
  int64_t version = 0;
  int64_t lease = 0;
};

// The end of the range of all keys starting with `prefix` (etcd's clientv3.GetPrefixRangeEnd).
std::string PrefixEnd(std::string_view prefix);

struct RangeRequest {
  std::string key;
  std::string range_end;  // empty: only `key`
  int64_t limit = 0;      // 0: no limit
  int64_t revision = 0;   // 0: latest
  bool keys_only = false;
  bool count_only = false;
};
struct RangeResponse {
  int64_t revision = 0;  // the store's revision when the range was served (header.revision)
  std::vector<KeyValue> kvs;
  bool more = false;
  int64_t count = 0;
};

struct PutRequest {
  std::string key;
  Value value;
  int64_t lease = 0;
  bool prev_kv = false;
};
struct PutResponse {
  int64_t revision = 0;
  std::optional<KeyValue> prev_kv;
};

struct DeleteRequest {
  std::string key;
  std::string range_end;  // empty: only `key`
  bool prev_kv = false;
};
struct DeleteResponse {
  int64_t revision = 0;
  int64_t deleted = 0;
  std::vector<KeyValue> prev_kvs;
};

struct Compare {
  enum class Target { kVersion, kCreateRevision, kModRevision, kValue };
  enum class Result { kEqual, kNotEqual, kGreater, kLess };
  std::string key;
  Target target = Target::kModRevision;
  Result result = Result::kEqual;
  int64_t number = 0;  // for version / create / mod revision; a missing key has 0 for all three
  std::string value;   // for kValue; a compare on the value of a missing key is false

  static Compare ModRevision(std::string key, Result r, int64_t rev) {
    return {std::move(key), Target::kModRevision, r, rev, {}};
  }
  static Compare Version(std::string key, Result r, int64_t v) {
    return {std::move(key), Target::kVersion, r, v, {}};
  }
  static Compare CreateRevision(std::string key, Result r, int64_t rev) {
    return {std::move(key), Target::kCreateRevision, r, rev, {}};
  }
  static Compare ValueIs(std::string key, Result r, std::string v) {
    return {std::move(key), Target::kValue, r, 0, std::move(v)};
  }
};

struct TxnOp {
  enum class Type { kRange, kPut, kDelete };
  Type type = Type::kRange;
  RangeRequest range;
  PutRequest put;
  DeleteRequest del;

  static TxnOp Get(RangeRequest r) {
    TxnOp op;
    op.type = Type::kRange;
    op.range = std::move(r);
    return op;
  }
  static TxnOp Put(PutRequest p) {
    TxnOp op;
    op.type = Type::kPut;
    op.put = std::move(p);
    return op;
  }
  static TxnOp Delete(DeleteRequest d) {
    TxnOp op;
    op.type = Type::kDelete;
    op.del = std::move(d);
    return op;
  }
};
struct TxnOpResponse {
  TxnOp::Type type = TxnOp::Type::kRange;
  RangeResponse range;
  PutResponse put;
  DeleteResponse del;
};
struct TxnRequest {
  std::vector<Compare> compare;  // all must hold for `success` to run
  std::vector<TxnOp> success;
  std::vector<TxnOp> failure;
};
struct TxnResponse {
  int64_t revision = 0;
  bool succeeded = false;
  std::vector<TxnOpResponse> responses;
};

struct WatchEvent {
  enum class Type { kPut, kDelete };
  Type type = Type::kPut;
  KeyValue kv;                      // for kDelete: key and mod_revision only
  std::optional<KeyValue> prev_kv;  // when WatchRequest::prev_kv
};
struct WatchRequest {
  std::string key;
  std::string range_end;       // empty: only `key`
  int64_t start_revision = 0;  // 0: current revision + 1
  bool prev_kv = false;
};
struct WatchResponse {
  int64_t header_revision = 0;
  std::vector<WatchEvent> events;  // all of one revision, in order
  // Set when the watch ends: compacted (compact_revision > 0), or an error (status not OK).
  bool canceled = false;
  int64_t compact_revision = 0;
  Status status;
};
using WatchCallback = std::function<void(const WatchResponse&)>;

// A live watch. Destroying it cancels the watch.
class Watch {
 public:
  virtual ~Watch() = default;
};

struct LeaseGrantResponse {
  int64_t id = 0;
  int64_t ttl_seconds = 0;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual Result<RangeResponse> Range(const RangeRequest& req) = 0;
  virtual Result<PutResponse> Put(const PutRequest& req) = 0;
  virtual Result<DeleteResponse> DeleteRange(const DeleteRequest& req) = 0;
  virtual Result<TxnResponse> Txn(const TxnRequest& req) = 0;
  // Compacts history below `revision`; kCompacted if already compacted at or past it,
  // kFutureRevision if revision is above the current one. Returns the store's revision.
  virtual Result<int64_t> Compact(int64_t revision) = 0;
  // Returns nullptr only if the store is shut down; errors come through the callback.
  virtual std::unique_ptr<Watch> StartWatch(const WatchRequest& req, WatchCallback cb) = 0;

  // id 0 lets the store choose an id. TTL in seconds.
  virtual Result<LeaseGrantResponse> LeaseGrant(int64_t ttl_seconds, int64_t id = 0) = 0;
  virtual Status LeaseRevoke(int64_t id) = 0;
  // Renews the lease; returns the new TTL, kNotFound if it expired or never existed.
  virtual Result<int64_t> LeaseKeepAlive(int64_t id) = 0;

  // Convenience wrappers over Range/Put/DeleteRange.
  Result<std::optional<KeyValue>> Get(const std::string& key);
  Result<RangeResponse> GetPrefix(const std::string& prefix, int64_t limit = 0, int64_t revision = 0);
};

}  // namespace rcsim

#endif  // RCSIM_ENGINE_STORE_H_
