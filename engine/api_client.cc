#include "engine/api_client.h"

namespace rcsim {

const char* VerbName(Verb verb) {
  switch (verb) {
    case Verb::kGet: return "get";
    case Verb::kList: return "list";
    case Verb::kWatch: return "watch";
    case Verb::kCreate: return "create";
    case Verb::kUpdate: return "update";
    case Verb::kPatch: return "patch";
    case Verb::kDelete: return "delete";
  }
  return "unknown";
}

}  // namespace rcsim
