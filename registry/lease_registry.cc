#include "registry/lease_registry.h"

#include "engine/codec.h"
#include "registry/validation.h"

namespace rcsim {
namespace {

constexpr int kUpdateAttempts = 16;

Status LeaseNotFound(std::string_view name) {
  return Status(Code::kNotFound, "leases.coordination.k8s.io \"" + std::string(name) + "\" not found");
}

Status LeaseConflict(std::string_view name) {
  return Status(Code::kConflict, "Operation cannot be fulfilled on leases.coordination.k8s.io \"" +
                                     std::string(name) +
                                     "\": the object has been modified; please apply your changes to the "
                                     "latest version and try again");
}

Status ValidateLease(const Lease& lease) {
  if (lease.metadata.name.empty()) return Status(Code::kInvalid, "metadata.name: Required value");
  if (!IsDns1123Subdomain(lease.metadata.name)) {
    return Status(Code::kInvalid, "metadata.name: Invalid value: \"" + lease.metadata.name +
                                      "\": must be a lowercase RFC 1123 subdomain");
  }
  if (lease.spec.lease_duration_seconds && *lease.spec.lease_duration_seconds <= 0) {
    return Status(Code::kInvalid, "spec.leaseDurationSeconds: Invalid value: must be greater than 0");
  }
  if (lease.spec.lease_transitions && *lease.spec.lease_transitions < 0) {
    return Status(Code::kInvalid, "spec.leaseTransitions: Invalid value: must be greater than or equal to 0");
  }
  return Status::Ok();
}

// The stored form: no resourceVersion. Typed: encoded only if a store asks for the bytes (etcd does,
// the in-memory store does not).
Value Stored(Lease lease) {
  lease.metadata.resource_version.clear();
  return Value(std::make_shared<const Lease>(std::move(lease)));
}

// The lease a stored value holds, without its resourceVersion: the typed one the registry wrote, or
// what its bytes decode to.
Result<Lease> StoredLease(const Value& value) {
  if (value.lease()) return *value.lease();
  return DecodeLease(value.bytes());
}

// The lease selectors `opts` may carry: labels, metadata.name and metadata.namespace.
Status CheckLeaseFields(const ListOptions& opts) {
  for (const FieldRequirement& f : opts.fields) {
    if (f.field != "metadata.namespace") {
      return Status(Code::kBadRequest, "field label not supported: " + f.field);
    }
  }
  return Status::Ok();
}

bool LeaseMatches(const Lease& lease, const ListOptions& opts) {
  if (!opts.field_name.empty() && lease.metadata.name != opts.field_name) return false;
  for (const FieldRequirement& f : opts.fields) {  // metadata.namespace only (CheckLeaseFields)
    if ((lease.metadata.namespace_ == f.value) != f.equal) return false;
  }
  return opts.label_selector.Matches(lease.metadata.labels);
}

}  // namespace

std::string LeasePrefix(std::string_view ns) {
  std::string p = "/registry/leases/";
  if (!ns.empty()) p.append(ns).append("/");
  return p;
}

std::string LeaseKey(std::string_view ns, std::string_view name) { return LeasePrefix(ns).append(name); }

Result<LeasePtr> LeaseRegistry::FromKv(const KeyValue& kv) {
  {
    MutexLock lock(decoded_mu_);
    if (auto it = decoded_.find(kv.key);
        it != decoded_.end() && it->second.mod_revision == kv.mod_revision && it->second.value == kv.value) {
      return it->second.lease;
    }
  }
  auto lease = StoredLease(kv.value);
  if (!lease.ok())
    return Status(Code::kInternal,
                  "stored lease at " + kv.key + " does not decode: " + lease.status().message());
  lease->metadata.resource_version = std::to_string(kv.mod_revision);
  LeasePtr out = std::make_shared<const Lease>(std::move(lease).value());
  Remember(kv.key, kv.mod_revision, kv.value, out);
  return out;
}

void LeaseRegistry::Remember(const std::string& key, int64_t mod_revision, const Value& value,
                             const LeasePtr& lease) {
  MutexLock lock(decoded_mu_);
  if (decoded_.size() >= kMaxDecoded && !decoded_.contains(key)) decoded_.clear();
  decoded_[key] = Decoded{mod_revision, value, lease};
}

Result<LeasePtr> LeaseRegistry::Get(const std::string& ns, const std::string& name) {
  if (ns.empty() || name.empty()) return LeaseNotFound(name);
  auto got = ctx_->store()->Get(LeaseKey(ns, name));
  if (!got.ok()) return got.status();
  if (!got->has_value()) return LeaseNotFound(name);
  return FromKv(**got);
}

Result<ObjectList<Lease>> LeaseRegistry::List(const std::string& ns) {
  auto r = ctx_->store()->GetPrefix(LeasePrefix(ns));
  if (!r.ok()) return r.status();
  ObjectList<Lease> out;
  out.resource_version = std::to_string(r->revision);
  for (const KeyValue& kv : r->kvs) {
    auto lease = FromKv(kv);
    if (!lease.ok()) continue;  // an undecodable value is skipped, never fatal to the list
    out.items.push_back(std::move(lease).value());
  }
  return out;
}

Result<ObjectList<Lease>> LeaseRegistry::List(const std::string& ns, const ListOptions& opts) {
  if (Status s = CheckLeaseFields(opts); !s.ok()) return s;
  auto list = List(ns);
  if (!list.ok()) return list.status();
  std::erase_if(list->items, [&](const LeasePtr& l) { return !LeaseMatches(*l, opts); });
  return list;
}

namespace {

class LeaseWatch final : public RegistryWatch {
 public:
  std::unique_ptr<rcsim::Watch> watch;
};

const char* WatchTypeName(ApiWatchEvent<Lease>::Type type) {
  using Type = ApiWatchEvent<Lease>::Type;
  switch (type) {
    case Type::kAdded: return "ADDED";
    case Type::kModified: return "MODIFIED";
    case Type::kDeleted: return "DELETED";
    case Type::kBookmark: return "BOOKMARK";
    case Type::kError: return "ERROR";
  }
  return "ERROR";
}

}  // namespace

Result<std::unique_ptr<RegistryWatch>> LeaseRegistry::Watch(
    const std::string& ns, const ListOptions& opts, const std::string& resource_version,
    std::function<void(const ApiWatchEvent<Lease>&)> on_event) {
  using Type = ApiWatchEvent<Lease>::Type;
  if (Status s = CheckLeaseFields(opts); !s.ok()) return s;
  int64_t from = 0;
  if (resource_version.empty() || resource_version == "0") {
    auto list = List(ns, opts);
    if (!list.ok()) return list.status();
    for (const LeasePtr& l : list->items) {
      ApiWatchEvent<Lease> ev;
      ev.type = Type::kAdded;
      ev.object = l;
      on_event(ev);
    }
    from = std::stoll(list->resource_version);
  } else {
    Result<int64_t> rv = ParseResourceVersion(resource_version);
    if (!rv.ok()) return rv.status();
    from = *rv;
  }
  WatchRequest req;
  req.key = LeasePrefix(ns);
  req.range_end = PrefixEnd(req.key);
  req.start_revision = from + 1;
  req.prev_kv = true;
  auto out = std::make_unique<LeaseWatch>();
  out->watch =
      ctx_->store()->StartWatch(req, [this, opts, on_event = std::move(on_event)](const WatchResponse& r) {
        if (r.canceled) {
          ApiWatchEvent<Lease> ev;
          ev.type = Type::kError;
          ev.error = r.compact_revision > 0 ? Status(Code::kGone, "too old resource version")
                                            : Status(Code::kInternal, r.status.message());
          on_event(ev);
          return;
        }
        for (const WatchEvent& e : r.events) {
          const bool put = e.type == WatchEvent::Type::kPut;
          const KeyValue* kv = put ? &e.kv : (e.prev_kv ? &*e.prev_kv : nullptr);
          if (kv == nullptr) continue;
          // A deleted lease is its last stored state at the deletion's revision; one that does not decode
          // is skipped, as lists skip it. A written one is decoded through the decode cache, so that the
          // next read of it (the holder's next renewal reads it first) does not decode it again.
          ApiWatchEvent<Lease> ev;
          if (put) {
            Result<LeasePtr> lease = FromKv(e.kv);
            if (!lease.ok() || !LeaseMatches(**lease, opts)) continue;
            ev.object = std::move(lease).value();
          } else {
            Result<Lease> lease = StoredLease(kv->value);
            if (!lease.ok() || !LeaseMatches(*lease, opts)) continue;
            lease->metadata.resource_version = std::to_string(e.kv.mod_revision);
            ev.object = std::make_shared<const Lease>(std::move(lease).value());
          }
          ev.type = !put                                        ? Type::kDeleted
                    : e.kv.create_revision == e.kv.mod_revision ? Type::kAdded
                                                                : Type::kModified;
          on_event(ev);
        }
      });
  return std::unique_ptr<RegistryWatch>(std::move(out));
}

Result<std::unique_ptr<RegistryWatch>> LeaseRegistry::Watch(
    const std::string& ns, const ListOptions& opts, const std::string& resource_version,
    std::function<void(const nlohmann::json& event)> on_event, std::function<void()> on_end) {
  return Watch(ns, opts, resource_version,
               [on_event = std::move(on_event), on_end = std::move(on_end)](const ApiWatchEvent<Lease>& ev) {
                 if (ev.type == ApiWatchEvent<Lease>::Type::kError) {
                   on_event({{"type", "ERROR"}, {"object", StatusToJson(ev.error)}});
                   on_end();
                   return;
                 }
                 on_event({{"type", WatchTypeName(ev.type)}, {"object", LeaseToJson(*ev.object)}});
               });
}

Result<LeasePtr> LeaseRegistry::Create(const std::string& ns, Lease lease) {
  if (!lease.metadata.namespace_.empty() && lease.metadata.namespace_ != ns) {
    return Status(Code::kBadRequest,
                  "the namespace of the provided object does not match the namespace sent on the request");
  }
  if (ns.empty()) return Status(Code::kBadRequest, "a lease is namespaced: the request needs a namespace");
  lease.metadata.namespace_ = ns;
  lease.metadata.uid = ctx_->NewUid();
  lease.metadata.creation_timestamp = ctx_->Now();
  lease.metadata.resource_version.clear();
  if (Status s = ValidateLease(lease); !s.ok()) return s;
  const std::string key = LeaseKey(ns, lease.metadata.name);
  TxnRequest txn;
  txn.compare.push_back(Compare::CreateRevision(key, Compare::Result::kEqual, 0));
  PutRequest put;
  put.key = key;
  put.value = Stored(lease);
  const Value written = put.value;
  txn.success.push_back(TxnOp::Put(std::move(put)));
  auto r = ctx_->store()->Txn(txn);
  if (!r.ok()) return r.status();
  if (!r->succeeded) {
    return Status(Code::kAlreadyExists,
                  "leases.coordination.k8s.io \"" + lease.metadata.name + "\" already exists");
  }
  lease.metadata.resource_version = std::to_string(r->revision);
  auto out = std::make_shared<const Lease>(std::move(lease));
  Remember(key, r->revision, written, out);  // the watch and the next read need no decode
  return out;
}

Result<LeasePtr> LeaseRegistry::Update(const Lease& lease) {
  const std::string ns = lease.metadata.namespace_;
  const std::string name = lease.metadata.name;
  if (ns.empty() || name.empty()) return LeaseNotFound(name);
  const std::string key = LeaseKey(ns, name);
  for (int attempt = 0; attempt < kUpdateAttempts; ++attempt) {
    auto got = ctx_->store()->Get(key);
    if (!got.ok()) return got.status();
    if (!got->has_value()) return LeaseNotFound(name);
    auto stored = FromKv(**got);
    if (!stored.ok()) return stored.status();
    const Lease& old = **stored;
    if (!lease.metadata.resource_version.empty() &&
        lease.metadata.resource_version != old.metadata.resource_version) {
      return LeaseConflict(name);
    }
    Lease next = lease;
    next.metadata.uid = old.metadata.uid;
    next.metadata.creation_timestamp = old.metadata.creation_timestamp;
    next.metadata.resource_version = old.metadata.resource_version;
    if (Status s = ValidateLease(next); !s.ok()) return s;
    if (next == old) return *stored;
    TxnRequest txn;
    txn.compare.push_back(Compare::ModRevision(key, Compare::Result::kEqual, (*got)->mod_revision));
    PutRequest put;
    put.key = key;
    put.value = Stored(next);
    const Value written = put.value;
    txn.success.push_back(TxnOp::Put(std::move(put)));
    auto r = ctx_->store()->Txn(txn);
    if (!r.ok()) return r.status();
    if (r->succeeded) {
      next.metadata.resource_version = std::to_string(r->revision);
      auto out = std::make_shared<const Lease>(std::move(next));
      // What was written, as decoded already: the watches deliver it and the holder's next renewal
      // reads it without decoding it (the decode was 38% of a renewal's registry cost).
      Remember(key, r->revision, written, out);
      return out;
    }
    if (!lease.metadata.resource_version.empty()) return LeaseConflict(name);
  }
  return LeaseConflict(name);
}

Result<LeasePtr> LeaseRegistry::Delete(const std::string& ns, const std::string& name,
                                       const DeleteOptions& opts) {
  if (ns.empty() || name.empty()) return LeaseNotFound(name);
  const std::string key = LeaseKey(ns, name);
  for (int attempt = 0; attempt < kUpdateAttempts; ++attempt) {
    auto got = ctx_->store()->Get(key);
    if (!got.ok()) return got.status();
    if (!got->has_value()) return LeaseNotFound(name);
    auto stored = FromKv(**got);
    if (!stored.ok()) return stored.status();
    const ObjectMeta& meta = (*stored)->metadata;
    if (!opts.precondition_uid.empty() && opts.precondition_uid != meta.uid) {
      return Status(Code::kConflict, "Precondition failed: UID in precondition: " + opts.precondition_uid +
                                         ", UID in object meta: " + meta.uid.str());
    }
    if (!opts.precondition_resource_version.empty() &&
        opts.precondition_resource_version != meta.resource_version) {
      return Status(Code::kConflict, "Precondition failed: ResourceVersion in precondition: " +
                                         opts.precondition_resource_version +
                                         ", ResourceVersion in object meta: " + meta.resource_version);
    }
    if (opts.dry_run) return *stored;
    TxnRequest txn;
    txn.compare.push_back(Compare::ModRevision(key, Compare::Result::kEqual, (*got)->mod_revision));
    DeleteRequest del;
    del.key = key;
    txn.success.push_back(TxnOp::Delete(std::move(del)));
    auto r = ctx_->store()->Txn(txn);
    if (!r.ok()) return r.status();
    if (r->succeeded) {
      MutexLock lock(decoded_mu_);
      decoded_.erase(key);
      return *stored;
    }
  }
  return LeaseConflict(name);
}

}  // namespace rcsim
