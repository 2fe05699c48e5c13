// The query of a container-log request, as kube-apiserver's pods/log takes it and passes it on to
// the kubelet's /containerLogs/{namespace}/{pod}/{container}: container (pods/log only: the
// kubelet has it in the path), tailLines, follow and previous. One parser for both ends, so the
// API server and the node agent accept and refuse the same queries.
#ifndef RCSIM_BACKENDS_HTTP_LOG_QUERY_H_
#define RCSIM_BACKENDS_HTTP_LOG_QUERY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/status.h"

namespace rcsim {

struct LogQuery {
  std::string container;
  std::optional<int64_t> tail_lines;
  bool follow = false;
  bool previous = false;
};

// Parses "k=v&k=v" (percent-decoded; "true"/"1"/"false"/"0"/"" for the booleans). Parameters it
// does not know are ignored, as both servers do. kBadRequest naming the parameter and its value.
Result<LogQuery> ParseLogQuery(std::string_view query);

// tailLines, follow and previous as a query string without the '?' ("" when none is set).
std::string KubeletLogQuery(const LogQuery& q);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_HTTP_LOG_QUERY_H_
