#include "backends/process/container_logs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

namespace rcsim {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::file_time_type WrittenAt(const fs::path& p) {
  std::error_code ec;
  const fs::file_time_type t = fs::last_write_time(p, ec);
  return ec ? fs::file_time_type::min() : t;
}

// The newest of the two files of one instance.
fs::file_time_type InstanceTime(const fs::path& stdout_log) {
  std::string err = stdout_log.string();
  err.replace(err.size() - std::string(".stdout.log").size(), std::string::npos, ".stderr.log");
  return std::max(WrittenAt(stdout_log), WrittenAt(err));
}

}  // namespace

Result<ContainerLogFiles> FindContainerLogs(const std::string& root_dir, const std::string& pod_namespace,
                                            const std::string& pod_name, const std::string& container,
                                            bool previous) {
  // Names are DNS labels or subdomains: no '_', no '/', so "<ns>_<pod>_" names one pod's directories.
  for (const std::string* s : {&pod_namespace, &pod_name, &container}) {
    if (s->empty() || s->find_first_of("_/") != std::string::npos || *s == "." || *s == "..") {
      return Status(Code::kInvalid, "invalid name \"" + *s + "\"");
    }
  }
  const std::string prefix = pod_namespace + "_" + pod_name + "_";
  std::error_code ec;
  std::optional<fs::path> pod_dir;
  fs::file_time_type pod_time = fs::file_time_type::min();
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(root_dir) / "pods", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !e.is_directory()) continue;
    const fs::file_time_type t = WrittenAt(e.path() / container);
    if (!pod_dir || t > pod_time) {
      pod_dir = e.path();
      pod_time = t;
    }
  }
  if (!pod_dir) {
    return Status(Code::kNotFound,
                  "pod " + pod_namespace + "/" + pod_name + " has run no container on this node");
  }
  std::vector<std::pair<fs::file_time_type, fs::path>> instances;
  for (const fs::directory_entry& e : fs::directory_iterator(*pod_dir / container, ec)) {
    const std::string name = e.path().filename().string();
    const std::string suffix = ".stdout.log";
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      instances.emplace_back(InstanceTime(e.path()), e.path());
    }
  }
  if (instances.empty()) {
    return Status(Code::kNotFound, "container \"" + container + "\" of pod " + pod_namespace + "/" +
                                       pod_name + " has not run on this node");
  }
  std::sort(instances.begin(), instances.end());
  if (previous && instances.size() < 2) {
    return Status(Code::kNotFound, "previous terminated container \"" + container + "\" in pod \"" +
                                       pod_name + "\" not found");
  }
  const fs::path& out = instances[instances.size() - (previous ? 2 : 1)].second;
  std::string err = out.string();
  err.replace(err.size() - std::string(".stdout.log").size(), std::string::npos, ".stderr.log");
  return ContainerLogFiles{out.string(), err};
}

std::string ReadContainerLogs(const ContainerLogFiles& files, std::optional<int64_t> tail_lines) {
  std::string text = ReadAll(files.stdout_path);
  std::string err = ReadAll(files.stderr_path);
  if (!text.empty() && text.back() != '\n' && !err.empty()) text += '\n';
  text += err;
  if (!tail_lines) return text;
  if (*tail_lines <= 0) return std::string();
  // The last N lines: a final line without '\n' counts as one.
  std::size_t pos = text.size();
  if (pos > 0 && text[pos - 1] == '\n') --pos;
  for (int64_t n = 0; n < *tail_lines; ++n) {
    const std::size_t nl = pos == 0 ? std::string::npos : text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text;
    pos = nl;
  }
  return text.substr(pos + 1);
}

}  // namespace rcsim
