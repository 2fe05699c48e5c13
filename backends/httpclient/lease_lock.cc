#include "backends/httpclient/lease_lock.h"

#include "backends/httpclient/rest_wire.h"

namespace rcsim {

LeaderRecord RecordOfLease(const Lease& lease) {
  LeaderRecord r;
  r.holder_identity = lease.spec.holder_identity.value_or("");
  r.lease_duration = std::chrono::seconds(lease.spec.lease_duration_seconds.value_or(0));
  r.acquire_time = lease.spec.acquire_time;
  r.renew_time = lease.spec.renew_time;
  r.leader_transitions = lease.spec.lease_transitions.value_or(0);
  r.version = lease.metadata.resource_version;
  return r;
}

Lease HttpLeaseLock::ToLease(const LeaderRecord& record) const {
  Lease l;
  l.metadata.name = name_;
  l.metadata.namespace_ = ns_;
  l.metadata.resource_version = record.version;
  l.spec.holder_identity = record.holder_identity;
  l.spec.lease_duration_seconds =
      static_cast<int32_t>(std::chrono::duration_cast<std::chrono::seconds>(record.lease_duration).count());
  l.spec.acquire_time = record.acquire_time;
  l.spec.renew_time = record.renew_time;
  l.spec.lease_transitions = record.leader_transitions;
  return l;
}

void HttpLeaseLock::Send(const std::string& method, const std::string& target, std::string body,
                         Callback<Result<LeaderRecord>> done) {
  client_->Send(method, target, std::move(body), [done = std::move(done)](Result<HttpReply> reply) {
    if (!reply.ok()) return done(reply.status());
    if (reply->status / 100 != 2) return done(StatusFromHttp(reply->status, reply->body));
    Result<Lease> lease = DecodeLease(reply->body);
    if (!lease.ok()) return done(Status(Code::kInternal, "lease in reply: " + lease.status().message()));
    done(RecordOfLease(*lease));
  });
}

void HttpLeaseLock::Get(Callback<Result<LeaderRecord>> done) {
  Send("GET",
       "/apis/coordination.k8s.io/v1/namespaces/" + PercentEncode(ns_) + "/leases/" + PercentEncode(name_),
       "", std::move(done));
}

void HttpLeaseLock::Create(const LeaderRecord& record, Callback<Result<LeaderRecord>> done) {
  Lease l = ToLease(record);
  l.metadata.resource_version.clear();
  Send("POST", "/apis/coordination.k8s.io/v1/namespaces/" + PercentEncode(ns_) + "/leases", EncodeLease(l),
       std::move(done));
}

void HttpLeaseLock::Update(const LeaderRecord& record, Callback<Result<LeaderRecord>> done) {
  Send("PUT",
       "/apis/coordination.k8s.io/v1/namespaces/" + PercentEncode(ns_) + "/leases/" + PercentEncode(name_),
       EncodeLease(ToLease(record)), std::move(done));
}

}  // namespace rcsim
