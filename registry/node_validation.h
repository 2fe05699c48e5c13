// Validation of core/v1 Nodes and Bindings and of DeleteOptions, in the form of registry/validation.h
// (kInvalid with one StatusCause per problem). Thread-safety: pure functions.
#ifndef RCSIM_REGISTRY_NODE_VALIDATION_H_
#define RCSIM_REGISTRY_NODE_VALIDATION_H_

#include "engine/api_client.h"
#include "engine/node_types.h"
#include "engine/status.h"

namespace rcsim {

// Name (a DNS-1123 subdomain), no namespace, labels, annotations, taint effects, condition statuses.
Status ValidateNode(const Node& node);
// target.kind Node, target.name and metadata.name set.
Status ValidateBinding(const Binding& binding);
// gracePeriodSeconds >= 0, propagationPolicy one of "", Orphan, Background, Foreground.
Status ValidateDeleteOptions(const DeleteOptions& opts);

}  // namespace rcsim

#endif  // RCSIM_REGISTRY_NODE_VALIDATION_H_
