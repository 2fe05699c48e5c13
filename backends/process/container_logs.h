// Reading a container's output as the kubelet serves it (GET /containerLogs/<ns>/<pod>/<container>),
// from the log files ProcessRuntime writes under its root dir:
//   pods/<ns>_<pod>_<uid>/<container>/<id>.stdout.log and <id>.stderr.log
// The pod is the most recently used directory of that namespace and name (a pod re-created under the
// same name has a new uid); its instances are ordered by when their logs were last written, the
// newest being the current container and the one before it `previous`.
//
// The two streams are kept in separate files, so their interleaving is lost: the output is the
// instance's stdout followed by its stderr (`tail_lines` counts over that).
//
// Thread-safety: stateless; safe from any thread.
#ifndef RCSIM_BACKENDS_PROCESS_CONTAINER_LOGS_H_
#define RCSIM_BACKENDS_PROCESS_CONTAINER_LOGS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "engine/status.h"

namespace rcsim {

struct ContainerLogFiles {
  std::string stdout_path;
  std::string stderr_path;
};

// The files of that container's current instance (or of the one before it); kNotFound naming what is
// missing (no such pod on this node, no such container, no previous instance).
Result<ContainerLogFiles> FindContainerLogs(const std::string& root_dir, const std::string& pod_namespace,
                                            const std::string& pod_name, const std::string& container,
                                            bool previous);

// What has been written to `files` so far; with tail_lines, only the last that many lines.
std::string ReadContainerLogs(const ContainerLogFiles& files, std::optional<int64_t> tail_lines);

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_PROCESS_CONTAINER_LOGS_H_
