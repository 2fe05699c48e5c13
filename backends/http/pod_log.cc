#include "backends/http/pod_log.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>
#include <utility>

#include "backends/http/log_query.h"
#include "engine/codec.h"

namespace rcsim {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr auto kConnectTimeout = std::chrono::seconds(5);
constexpr auto kReadTimeout = std::chrono::seconds(30);
// Not boost::none: Boost 1.74's parser compares a Content-Length against the optional and fails with
// body_limit when it is disengaged.
constexpr uint64_t kNoBodyLimit = std::numeric_limits<uint64_t>::max();

ApiOutcome Error(Code code, std::string message) {
  ApiOutcome o;
  const Status s(code, std::move(message));
  o.response.status = HttpCodeOf(s.code());
  o.response.body = DumpJson(StatusToJson(s));
  return o;
}

// An open response from the node agent: its status and headers read, the body still to come.
struct Upstream {
  std::unique_ptr<net::io_context> ioc = std::make_unique<net::io_context>();
  std::unique_ptr<beast::tcp_stream> stream = std::make_unique<beast::tcp_stream>(*ioc);
  beast::flat_buffer buffer;
  std::unique_ptr<http::response_parser<http::buffer_body>> parser =
      std::make_unique<http::response_parser<http::buffer_body>>();
};

Status Connect(const std::string& host, int port, const std::string& target, Upstream* up) {
  beast::error_code ec;
  tcp::resolver resolver(*up->ioc);
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  const std::string where = host + ":" + std::to_string(port);
  if (ec)
    return Status(Code::kUnavailable, "cannot resolve the node agent at " + where + ": " + ec.message());
  up->stream->expires_after(kConnectTimeout);
  up->stream->connect(endpoints, ec);
  if (ec) return Status(Code::kUnavailable, "cannot reach the node agent at " + where + ": " + ec.message());
  http::request<http::empty_body> req(http::verb::get, target, 11);
  req.set(http::field::host, where);
  req.set(http::field::user_agent, "rcsim-apiserver");
  up->stream->expires_after(kReadTimeout);
  http::write(*up->stream, req, ec);
  up->parser->body_limit(kNoBodyLimit);
  if (!ec) http::read_header(*up->stream, up->buffer, *up->parser, ec);
  if (ec) return Status(Code::kUnavailable, "node agent at " + where + ": " + ec.message());
  return Status::Ok();
}

// Reads the next piece of the body into `out`; false at its end or on an error.
bool ReadSome(Upstream* up, std::string* out) {
  out->clear();
  if (up->parser->is_done()) return false;
  char buf[16 << 10];
  auto& body = up->parser->get().body();
  body.data = buf;
  body.size = sizeof buf;
  beast::error_code ec;
  http::read_some(*up->stream, up->buffer, *up->parser, ec);
  if (ec && ec != http::error::need_buffer) return false;
  out->assign(buf, sizeof buf - body.size);
  return !up->parser->is_done() || !out->empty();
}

// A followed log: a thread forwards the node agent's stream to the sink until it ends or this is
// destroyed (which closes the connection, ending the thread's read).
class FollowedLog final : public RegistryWatch {
 public:
  FollowedLog(std::unique_ptr<Upstream> up, std::shared_ptr<WatchSink> sink)
      : up_(std::move(up)), sink_(std::move(sink)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~FollowedLog() override {
    stopping_.store(true);
    beast::error_code ec;
    up_->stream->socket().shutdown(tcp::socket::shutdown_both, ec);
    thread_.join();
  }
  FollowedLog(const FollowedLog&) = delete;
  FollowedLog& operator=(const FollowedLog&) = delete;

 private:
  void Run() {
    std::string piece;
    while (!stopping_.load()) {
      up_->stream->expires_never();
      const bool more = ReadSome(up_.get(), &piece);
      if (!piece.empty() && !stopping_.load())
        sink_->OnLine(std::make_shared<const std::string>(std::move(piece)));
      piece.clear();
      if (!more || up_->parser->is_done()) break;
    }
    if (!stopping_.load()) sink_->OnEnd();
  }

  std::unique_ptr<Upstream> up_;
  std::shared_ptr<WatchSink> sink_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

std::string Escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      out += hex;
    }
  }
  return out;
}

}  // namespace

ApiOutcome ServePodLog(Registry* registry, const HttpRequest& req, const std::string& ns,
                       const std::string& name, const std::shared_ptr<WatchSink>& sink) {
  if (req.method != "GET") {
    return Error(Code::kMethodNotAllowed, "the server does not allow this method on pods/log: " + req.method);
  }
  const std::size_t qmark = req.target.find('?');
  Result<LogQuery> params = ParseLogQuery(
      qmark == std::string::npos ? std::string_view() : std::string_view(req.target).substr(qmark + 1));
  if (!params.ok()) return Error(params.status().code(), params.status().message());
  Result<PodPtr> pod = registry->pods().Get(ns, name);
  if (!pod.ok()) return Error(pod.status().code(), pod.status().message());
  std::string container = params->container;
  const std::vector<Container>& containers = (*pod)->spec.containers;
  if (container.empty()) {
    if (containers.size() != 1) {
      std::string names;
      for (const Container& c : containers) names += (names.empty() ? "" : " ") + c.name;
      return Error(Code::kBadRequest,
                   "a container name must be specified for pod " + name + ", choose one of: [" + names + "]");
    }
    container = containers.front().name;
  } else {
    bool known = false;
    for (const Container& c : containers) known = known || c.name == container;
    if (!known) return Error(Code::kBadRequest, "container " + container + " is not valid for pod " + name);
  }
  const std::string& node_name = (*pod)->spec.node_name;
  if (node_name.empty()) return Error(Code::kBadRequest, "pod " + name + " does not have a host assigned");
  Result<NodePtr> node = registry->nodes().Get("", node_name);
  if (!node.ok()) {
    return Error(node.status().code() == Code::kNotFound ? Code::kNotFound : node.status().code(),
                 "node " + node_name + " of pod " + name + ": " + node.status().message());
  }
  std::string address;
  for (const char* type : {"InternalIP", "Hostname"}) {
    for (const NodeAddress& a : (*node)->status.addresses) {
      if (address.empty() && a.type == type) address = a.address;
    }
  }
  const int port = (*node)->status.kubelet_port;
  if (port <= 0 || address.empty()) {
    return Error(Code::kBadRequest,
                 "node " + node_name +
                     " has no kubelet endpoint (status.daemonEndpoints.kubeletEndpoint.Port and an "
                     "InternalIP address): its node agent does not serve logs");
  }
  std::string target = "/containerLogs/" + Escape(ns) + "/" + Escape(name) + "/" + Escape(container);
  if (const std::string query = KubeletLogQuery(*params); !query.empty()) target += "?" + query;

  auto up = std::make_unique<Upstream>();
  if (Status s = Connect(address, port, target, up.get()); !s.ok()) return Error(s.code(), s.message());
  const int code = static_cast<int>(up->parser->get().result_int());
  if (code != 200 || !params->follow) {
    std::string body;
    std::string piece;
    while (ReadSome(up.get(), &piece)) {
      body += piece;
      if (up->parser->is_done()) break;
    }
    ApiOutcome o;
    o.response.status = code;
    o.response.content_type = std::string(up->parser->get()[http::field::content_type].empty()
                                              ? "text/plain"
                                              : up->parser->get()[http::field::content_type]);
    o.response.body = std::move(body);
    if (code >= 500) {  // the node agent's failure is not the client's: say so in our own words
      return Error(Code::kUnavailable, "node agent " + node_name + " answered " + std::to_string(code));
    }
    return o;
  }
  ApiOutcome o;
  o.response.status = 200;
  o.response.content_type = "text/plain";
  // Bytes the header read already took from the body are the first piece; the thread reads the rest.
  o.watch = std::make_unique<FollowedLog>(std::move(up), sink);
  return o;
}

}  // namespace rcsim
