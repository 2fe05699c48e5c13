#include "backends/httpclient/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <boost/beast/core/detail/base64.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rcsim {
namespace {

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kNotFound, "cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<std::string> Base64(const std::string& in, const std::string& what) {
  namespace b64 = boost::beast::detail::base64;
  std::string clean;
  for (char c : in) {
    if (c != '\n' && c != '\r' && c != ' ') clean.push_back(c);
  }
  std::string out(b64::decoded_size(clean.size()), '\0');
  auto [written, read] = b64::decode(out.data(), clean.data(), clean.size());
  // decode() stops at the '=' padding; anything else left over is an error.
  if (clean.find_first_not_of('=', read) != std::string::npos) {
    return Status(Code::kInvalid, what + ": not valid base64");
  }
  out.resize(written);
  return out;
}

// The entry named `name` of the list `key` ("clusters", ...), or an undefined node.
YAML::Node Named(const YAML::Node& root, const char* key, const std::string& name) {
  const YAML::Node list = root[key];
  if (!list || !list.IsSequence()) return YAML::Node(YAML::NodeType::Undefined);
  for (const YAML::Node& e : list) {
    if (e.IsMap() && e["name"] && e["name"].as<std::string>() == name) return e;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::string Str(const YAML::Node& n, const char* key) {
  return n && n.IsMap() && n[key] && n[key].IsScalar() ? n[key].as<std::string>() : std::string();
}

}  // namespace

Result<std::string> ReadTokenFile(const std::string& path) {
  Result<std::string> t = ReadFile(path);
  if (!t.ok()) return Status(Code::kNotFound, "cannot read token file " + path);
  std::string token = std::move(t).value();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) return Status(Code::kInvalid, "token file " + path + " is empty");
  return token;
}

Result<ClientConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  YAML::Node root;
  try {  // the parse boundary
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Status(Code::kNotFound, "kubeconfig " + path + ": cannot read the file");
  } catch (const YAML::Exception& e) {
    return Status(Code::kInvalid, "kubeconfig " + path + ": " + e.what());
  }
  const std::string where = "kubeconfig " + path;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  auto resolve = [&](const std::string& p) {
    if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
    return (dir / p).string();
  };
  try {
    if (!root.IsMap()) return Status(Code::kInvalid, where + ": not a YAML mapping");
    const std::string ctx_name = context.empty() ? Str(root, "current-context") : context;
    if (ctx_name.empty())
      return Status(Code::kInvalid, where + ": no current-context and no --context given");
    const YAML::Node ctx = Named(root, "contexts", ctx_name)["context"];
    if (!ctx || !ctx.IsMap())
      return Status(Code::kInvalid, where + ": no context named \"" + ctx_name + "\"");
    const std::string cluster_name = Str(ctx, "cluster");
    const YAML::Node cluster = Named(root, "clusters", cluster_name)["cluster"];
    if (!cluster || !cluster.IsMap()) {
      return Status(Code::kInvalid, where + ": context \"" + ctx_name + "\" names no known cluster (\"" +
                                        cluster_name + "\")");
    }
    ClientConfig c;
    c.source = where + " (context " + ctx_name + ")";
    c.server = Str(cluster, "server");
    if (c.server.empty())
      return Status(Code::kInvalid, where + ": cluster \"" + cluster_name + "\" has no server");
    c.ca_file = resolve(Str(cluster, "certificate-authority"));
    if (std::string d = Str(cluster, "certificate-authority-data"); !d.empty()) {
      Result<std::string> pem = Base64(d, where + ": certificate-authority-data");
      if (!pem.ok()) return pem.status();
      c.ca_data = *pem;
    }
    c.insecure_skip_tls_verify =
        cluster["insecure-skip-tls-verify"] && cluster["insecure-skip-tls-verify"].as<bool>();
    c.tls_server_name = Str(cluster, "tls-server-name");
    const std::string user_name = Str(ctx, "user");
    if (!user_name.empty()) {
      const YAML::Node user = Named(root, "users", user_name)["user"];
      if (!user)
        return Status(Code::kInvalid,
                      where + ": context \"" + ctx_name + "\" names no known user (\"" + user_name + "\")");
      c.token = Str(user, "token");
      if (std::string tf = Str(user, "tokenFile"); !tf.empty() && c.token.empty()) {
        Result<std::string> t = ReadTokenFile(resolve(tf));
        if (!t.ok()) return Status(t.status().code(), where + ": " + t.status().message());
        c.token = *t;
      }
      c.client_cert_file = resolve(Str(user, "client-certificate"));
      c.client_key_file = resolve(Str(user, "client-key"));
      for (auto [key, out] : {std::pair{"client-certificate-data", &c.client_cert_data},
                              std::pair{"client-key-data", &c.client_key_data}}) {
        if (std::string d = Str(user, key); !d.empty()) {
          Result<std::string> pem = Base64(d, where + ": " + key);
          if (!pem.ok()) return pem.status();
          *out = *pem;
        }
      }
    }
    return c;
  } catch (const YAML::Exception& e) {
    return Status(Code::kInvalid, where + ": " + e.what());
  }
}

Result<ClientConfig> InClusterConfig(const std::string& root) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr || *host == '\0' || *port == '\0') {
    return Status(Code::kNotFound, "not running in a cluster (KUBERNETES_SERVICE_HOST/PORT unset)");
  }
  ClientConfig c;
  const std::string h = host;
  c.server = "https://" + (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + port;
  Result<std::string> token = ReadTokenFile(root + "/token");
  if (!token.ok()) return token.status();
  c.token = *token;
  c.ca_file = root + "/ca.crt";
  c.source = "in-cluster service account";
  return c;
}

}  // namespace rcsim
