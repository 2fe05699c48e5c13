// EtcdStore: the Store port (engine/store.h) over a real etcd v3 cluster, through etcd's gRPC API.
//
// Endpoints: "http://host:port" (or "host:port"), tried in order. A unary call goes to the current
// endpoint. It moves on to the next one when the request cannot have been applied: no connection within
// dial_timeout, or etcd's "no leader"; a read (Range, LeaseKeepAlive) also moves on after gRPC
// UNAVAILABLE or DEADLINE_EXCEEDED. The endpoint that answered becomes the current one. When no endpoint
// answers the call fails with kUnavailable (not applied). A call, every endpoint it tries included,
// returns within dial_timeout + request_timeout.
//
// Errors: etcd's ErrCompacted -> kCompacted, ErrFutureRev -> kFutureRevision, lease not found ->
// kNotFound, lease id in use -> kAlreadyExists, a request etcd rejects as malformed (more than
// --max-txn-ops ops, a key written twice in one txn, an empty key, a TTL too large) -> kBadRequest.
// A write whose request_timeout passed while in flight, that failed UNAVAILABLE after it was sent, or
// that etcd answered with its own "request timed out" gives kTimeout: the outcome is unknown (it may
// have been applied), and it is not retried elsewhere.
//
// Watches: StartWatch with start_revision 0 first reads the current revision R (one linearizable round
// trip) and watches from R + 1, so every write that completes after StartWatch returns is delivered, as
// with the in-memory store. Each Watch owns one gRPC Watch stream and one thread that reads it and runs
// the callback (a thread per watch: fine for tens to a few hundred watches), so callbacks of a watch
// arrive in order, one at a time, never inline in StartWatch. etcd may batch events of several
// revisions into one message; they are split so each WatchResponse holds one revision. The stream
// carries the `hasleader` metadata, so a member without a leader ends the stream instead of hanging.
// When the stream fails (connection lost, no leader) the watch reconnects to the next endpoint (cycling
// through all, with backoff up to 1 s, for as long as the Watch lives; its thread waits up to
// dial_timeout for each connection, which is what makes gRPC connect when nothing else uses the channel) and
// resumes at the last delivered revision + 1, so no event is lost or repeated. If that revision has been
// compacted meanwhile the callback gets canceled=true with compact_revision; if etcd cancels the watch for
// another reason, canceled=true with a non-OK status. Destroying the Watch cancels the stream and joins
// the thread; after the destructor returns no callback runs. A Watch may outlive its EtcdStore, and may
// be destroyed from inside its own callback (the thread is then detached and exits after it returns).
//
// Leases: LeaseGrant/LeaseRevoke are unary; LeaseKeepAlive does one round trip on a short-lived
// LeaseKeepAlive stream. Expiry is etcd's (wall-clock) business; note etcd raises TTLs below its
// minimum (about 2 s with default flags) to that minimum.
//
// Thread-safety: EtcdStore is thread-safe; calls may run concurrently from any number of threads.
#ifndef RCSIM_BACKENDS_ETCD_ETCD_STORE_H_
#define RCSIM_BACKENDS_ETCD_ETCD_STORE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/log.h"
#include "engine/status.h"
#include "engine/store.h"
#include "engine/time.h"

namespace rcsim {

struct EtcdStoreOptions {
  std::vector<std::string> endpoints;  // "http://127.0.0.1:2379", ...
  Duration dial_timeout = std::chrono::seconds(2);
  Duration request_timeout = std::chrono::seconds(5);
  // Where watches report losing their stream and resuming it (one line each per outage); called from
  // the watch's thread, so it must be thread-safe. Null: silent.
  std::function<void(LogLevel, const std::string&)> log;
};

// Splits "http://a:2379,http://b:2379" (the --etcd_servers flag) into endpoints; empty items dropped.
std::vector<std::string> SplitEtcdEndpoints(const std::string& csv);

class EtcdStore final : public Store {
 public:
  // Does not connect: the first call does. With no endpoint, or a malformed one (https:// is not
  // supported), every call fails with kBadRequest; Create() reports that up front instead.
  explicit EtcdStore(EtcdStoreOptions options);
  static Result<std::unique_ptr<EtcdStore>> Create(EtcdStoreOptions options);
  ~EtcdStore() override;

  Result<RangeResponse> Range(const RangeRequest& req) override;
  Result<PutResponse> Put(const PutRequest& req) override;
  Result<DeleteResponse> DeleteRange(const DeleteRequest& req) override;
  Result<TxnResponse> Txn(const TxnRequest& req) override;
  Result<int64_t> Compact(int64_t revision) override;
  std::unique_ptr<Watch> StartWatch(const WatchRequest& req, WatchCallback cb) override;
  Result<LeaseGrantResponse> LeaseGrant(int64_t ttl_seconds, int64_t id = 0) override;
  Status LeaseRevoke(int64_t id) override;
  Result<int64_t> LeaseKeepAlive(int64_t id) override;

  // The index (into options.endpoints) of the endpoint calls currently go to.
  int current_endpoint() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;  // shared with live watches, which may outlive the store
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_ETCD_ETCD_STORE_H_
