// JSON codec for engine/node_types.h in the core/v1 wire shapes (camelCase, omitempty), as
// engine/codec.h is for pods and controllers: Decode* reject a wrong shape with kBadRequest naming the
// JSON path of the bad field; unknown fields are ignored.
#ifndef RCSIM_ENGINE_NODE_CODEC_H_
#define RCSIM_ENGINE_NODE_CODEC_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "engine/node_types.h"
#include "engine/status.h"

namespace rcsim {

nlohmann::json NodeToJson(const Node& node);
Result<Node> NodeFromJson(const nlohmann::json& j);
std::string EncodeNode(const Node& node);
Result<Node> DecodeNode(std::string_view bytes);

nlohmann::json BindingToJson(const Binding& binding);
Result<Binding> BindingFromJson(const nlohmann::json& j);

}  // namespace rcsim

#endif  // RCSIM_ENGINE_NODE_CODEC_H_
