// coordination.k8s.io/v1 Lease: the object leader election (and node heartbeats) write, with its JSON
// codec in the Kubernetes wire shape (camelCase, omitempty; times as RFC 3339 MicroTime).
//
// metadata is decoded as engine/codec.h's ObjectMeta (ownerReferences included: a node's Lease is owned
// by its Node, so the garbage collector deletes it with the Node). Of the rest, only the fields below
// are kept; unknown fields are ignored on decode, as the API server does.
#ifndef RCSIM_ENGINE_LEASE_H_
#define RCSIM_ENGINE_LEASE_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "engine/status.h"
#include "engine/time.h"
#include "engine/types.h"

namespace rcsim {

struct LeaseSpec {
  std::optional<std::string> holder_identity;
  std::optional<int32_t> lease_duration_seconds;
  std::optional<TimePoint> acquire_time;
  std::optional<TimePoint> renew_time;
  std::optional<int32_t> lease_transitions;
  bool operator==(const LeaseSpec&) const = default;
};

struct Lease {
  ObjectMeta metadata;
  LeaseSpec spec;
  bool operator==(const Lease&) const = default;
};
using LeasePtr = std::shared_ptr<const Lease>;

inline constexpr std::string_view kLeaseApiVersion = "coordination.k8s.io/v1";

nlohmann::json LeaseToJson(const Lease& lease);
std::string EncodeLease(const Lease& lease);  // compact JSON bytes
// kBadRequest naming the field for a malformed body; a body of another kind is kInvalid.
Result<Lease> LeaseFromJson(const nlohmann::json& j);
Result<Lease> DecodeLease(std::string_view bytes);

// "2006-01-02T15:04:05.000000Z" (microseconds, as Kubernetes' MicroTime).
std::string FormatMicroTime(TimePoint t);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_LEASE_H_
