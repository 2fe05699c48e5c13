// A LeaderLock (engine/leader_elector.h) over a coordination.k8s.io/v1 Lease through the API server,
// as kube-controller-manager's "leases" lock: GET/POST/PUT of
// /apis/coordination.k8s.io/v1/namespaces/{ns}/leases/{name}; the Lease's resourceVersion is the
// record's version (a PUT with a stale one gets 409, kConflict).
//
// Thread-safety: as HttpApiClient's; callbacks run on the client's I/O threads.
#ifndef RCSIM_BACKENDS_HTTPCLIENT_LEASE_LOCK_H_
#define RCSIM_BACKENDS_HTTPCLIENT_LEASE_LOCK_H_

#include <string>

#include "backends/httpclient/http_api_client.h"
#include "engine/leader_elector.h"
#include "engine/lease.h"

namespace rcsim {

class HttpLeaseLock final : public LeaderLock {
 public:
  // `client` is not owned and must outlive the lock.
  HttpLeaseLock(HttpApiClient* client, std::string ns, std::string name)
      : client_(client), ns_(std::move(ns)), name_(std::move(name)) {}

  void Get(Callback<Result<LeaderRecord>> done) override;
  void Create(const LeaderRecord& record, Callback<Result<LeaderRecord>> done) override;
  void Update(const LeaderRecord& record, Callback<Result<LeaderRecord>> done) override;
  std::string Describe() const override { return "Lease " + ns_ + "/" + name_; }

 private:
  Lease ToLease(const LeaderRecord& record) const;
  void Send(const std::string& method, const std::string& target, std::string body,
            Callback<Result<LeaderRecord>> done);

  HttpApiClient* client_;
  std::string ns_;
  std::string name_;
};

LeaderRecord RecordOfLease(const Lease& lease);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTPCLIENT_LEASE_LOCK_H_
