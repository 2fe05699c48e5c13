#include "engine/lease.h"

#include <limits>

#include "engine/codec.h"
#include "engine/json_parse.h"

namespace rcsim {
namespace {

using nlohmann::json;

Status Bad(const std::string& path, const char* what) {
  return Status(Code::kBadRequest, path + ": " + what);
}

// Reads an optional string field; false (and *err) on a wrong type.
bool OptString(const json& j, const char* key, const std::string& path, std::optional<std::string>* out,
               Status* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_string()) {
    *err = Bad(path + key, "expected string");
    return false;
  }
  *out = it->get<std::string>();
  return true;
}

bool OptInt32(const json& j, const char* key, const std::string& path, std::optional<int32_t>* out,
              Status* err) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return true;
  if (!it->is_number_integer()) {
    *err = Bad(path + key, "expected integer");
    return false;
  }
  const int64_t v = it->get<int64_t>();
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    *err = Bad(path + key, "out of range for int32");
    return false;
  }
  *out = static_cast<int32_t>(v);
  return true;
}

bool OptTime(const json& j, const char* key, const std::string& path, std::optional<TimePoint>* out,
             Status* err) {
  std::optional<std::string> s;
  if (!OptString(j, key, path, &s, err)) return false;
  if (!s) return true;
  *out = ParseRfc3339(*s);
  if (!*out) {
    *err = Bad(path + key, "expected an RFC 3339 time");
    return false;
  }
  return true;
}

}  // namespace

std::string FormatMicroTime(TimePoint t) {
  std::string s = FormatRfc3339(t);  // "...:05Z"
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(t - std::chrono::floor<std::chrono::seconds>(t));
  char frac[7] = {'.'};
  WriteFixedDigits(frac + 1, static_cast<std::uint64_t>(micros.count()), 6);
  s.insert(s.size() - 1, frac, sizeof(frac));
  return s;
}

json LeaseToJson(const Lease& lease) {
  json spec = json::object();
  const LeaseSpec& s = lease.spec;
  if (s.holder_identity) spec["holderIdentity"] = *s.holder_identity;
  if (s.lease_duration_seconds) spec["leaseDurationSeconds"] = *s.lease_duration_seconds;
  if (s.acquire_time) spec["acquireTime"] = FormatMicroTime(*s.acquire_time);
  if (s.renew_time) spec["renewTime"] = FormatMicroTime(*s.renew_time);
  if (s.lease_transitions) spec["leaseTransitions"] = *s.lease_transitions;
  return json{{"kind", "Lease"},
              {"apiVersion", kLeaseApiVersion},
              {"metadata", ObjectMetaToJson(lease.metadata)},
              {"spec", std::move(spec)}};
}

std::string EncodeLease(const Lease& lease) { return LeaseToJson(lease).dump(); }

Result<Lease> LeaseFromJson(const json& j) {
  if (!j.is_object()) return Bad("", "expected a JSON object");
  if (auto kind = j.find("kind"); kind != j.end() && !(kind->is_string() && *kind == "Lease")) {
    return Status(Code::kInvalid, "kind: expected Lease");
  }
  Lease lease;
  Status err = Status::Ok();
  if (auto meta = j.find("metadata"); meta != j.end() && !meta->is_null()) {
    Result<ObjectMeta> m = ObjectMetaFromJson(*meta, "metadata");
    if (!m.ok()) return m.status();
    lease.metadata = std::move(m).value();
  }
  if (auto spec = j.find("spec"); spec != j.end() && !spec->is_null()) {
    if (!spec->is_object()) return Bad("spec", "expected object");
    LeaseSpec& s = lease.spec;
    const std::string p = "spec.";
    if (!OptString(*spec, "holderIdentity", p, &s.holder_identity, &err) ||
        !OptInt32(*spec, "leaseDurationSeconds", p, &s.lease_duration_seconds, &err) ||
        !OptTime(*spec, "acquireTime", p, &s.acquire_time, &err) ||
        !OptTime(*spec, "renewTime", p, &s.renew_time, &err) ||
        !OptInt32(*spec, "leaseTransitions", p, &s.lease_transitions, &err)) {
      return err;
    }
  }
  return lease;
}

Result<Lease> DecodeLease(std::string_view bytes) {
  json j = ParseJson(bytes);
  if (j.is_discarded()) return Status(Code::kBadRequest, "malformed JSON");
  return LeaseFromJson(j);
}

}  // namespace rcsim
