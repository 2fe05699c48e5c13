#include "apps/node-agent/log_server.h"

#include <sys/socket.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <fstream>
#include <list>
#include <string_view>
#include <thread>
#include <vector>

#include "backends/http/api_handler.h"
#include "backends/http/log_query.h"
#include "backends/process/container_logs.h"
#include "engine/codec.h"
#include "engine/mutex.h"

namespace rcsim {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;

constexpr auto kFollowPoll = std::chrono::milliseconds(100);

// A Kubernetes Status body, as the API server's (engine/codec.h).
std::string StatusBody(Code code, const std::string& message) {
  return DumpJson(StatusToJson(Status(code, message)));
}

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  while (!path.empty()) {
    const std::size_t slash = path.find('/');
    if (slash != 0) out.emplace_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// Bytes appended to a file since `offset` (which it advances).
std::string ReadFrom(const std::string& path, std::size_t* offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string();
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  if (size <= *offset) return std::string();
  in.seekg(static_cast<std::streamoff>(*offset));
  std::string out(size - *offset, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  *offset += out.size();
  return out;
}

}  // namespace

struct LogServer::Impl {
  Impl(std::string root, std::string addr, uint16_t p)
      : root_dir(std::move(root)), address(std::move(addr)), port(p) {}

  void AcceptLoop() {
    while (!stopping.load()) {
      beast::error_code ec;
      tcp::socket socket(ioc);
      acceptor.accept(socket, ec);
      if (ec) {
        if (stopping.load()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // e.g. out of file descriptors
        continue;
      }
      MutexLock lock(mu);
      connections.emplace_back();
      Connection& c = connections.back();
      c.socket = std::make_unique<tcp::socket>(std::move(socket));
      c.thread = std::thread([this, &c] { Serve(*c.socket); });
      Reap();
    }
  }

  // Joins the threads of connections that ended.
  void Reap() REQUIRES(mu) {
    for (auto it = connections.begin(); it != connections.end();) {
      if (it->done.load()) {
        it->thread.join();
        it = connections.erase(it);
      } else {
        ++it;
      }
    }
  }

  void Serve(tcp::socket& socket) {
    beast::error_code ec;
    beast::flat_buffer buffer;
    while (!stopping.load()) {
      http::request<http::string_body> req;
      http::read(socket, buffer, req, ec);
      if (ec) break;
      if (!Answer(socket, req) || !req.keep_alive()) break;
    }
    socket.shutdown(tcp::socket::shutdown_both, ec);
    MarkDone(socket);
  }

  void MarkDone(const tcp::socket& socket) {
    MutexLock lock(mu);
    for (Connection& c : connections) {
      if (c.socket.get() == &socket) c.done.store(true);
    }
  }

  static bool Write(tcp::socket& socket, const http::request<http::string_body>& req, int code,
                    std::string_view content_type, std::string body) {
    http::response<http::string_body> res(static_cast<http::status>(code), req.version());
    res.set(http::field::content_type, std::string(content_type));
    res.body() = std::move(body);
    res.keep_alive(req.keep_alive());
    res.prepare_payload();
    beast::error_code ec;
    http::write(socket, res, ec);
    return !ec;
  }

  static bool Error(tcp::socket& socket, const http::request<http::string_body>& req, const Status& s) {
    const Code code = s.code() == Code::kNotFound ? Code::kNotFound : Code::kBadRequest;
    return Write(socket, req, HttpCodeOf(code), "application/json", StatusBody(code, s.message()));
  }

  // False when the connection is to close.
  bool Answer(tcp::socket& socket, const http::request<http::string_body>& req) {
    const std::string_view target(req.target().data(), req.target().size());
    const std::size_t qmark = target.find('?');
    const std::vector<std::string> seg = Split(target.substr(0, qmark));
    if (seg.size() == 1 && seg[0] == "healthz") return Write(socket, req, 200, "text/plain", "ok");
    if (seg.size() != 4 || seg[0] != "containerLogs") {
      return Error(socket, req, Status(Code::kNotFound, "404 page not found"));
    }
    if (req.method() != http::verb::get) {
      return Write(socket, req, 405, "application/json", StatusBody(Code::kMethodNotAllowed, "only GET"));
    }
    Result<LogQuery> q =
        ParseLogQuery(qmark == std::string_view::npos ? std::string_view() : target.substr(qmark + 1));
    if (!q.ok()) return Error(socket, req, q.status());
    Result<ContainerLogFiles> files = FindContainerLogs(root_dir, seg[1], seg[2], seg[3], q->previous);
    if (!files.ok()) return Error(socket, req, files.status());
    const std::string text = ReadContainerLogs(*files, q->tail_lines);
    if (!q->follow) return Write(socket, req, 200, "text/plain", text);
    return Follow(socket, req, *files, text);
  }

  // Streams what the files gain after `initial`, as chunks, until the client goes or Stop.
  bool Follow(tcp::socket& socket, const http::request<http::string_body>& req,
              const ContainerLogFiles& files, const std::string& initial) {
    http::response<http::empty_body> res(http::status::ok, req.version());
    res.set(http::field::content_type, "text/plain");
    res.chunked(true);
    res.keep_alive(false);
    http::response_serializer<http::empty_body> sr(res);
    beast::error_code ec;
    http::write_header(socket, sr, ec);
    if (ec) return false;
    // Offsets start at the ends of the files as they were read for `initial`.
    std::size_t out_offset = 0;
    std::size_t err_offset = 0;
    ReadFrom(files.stdout_path, &out_offset);
    ReadFrom(files.stderr_path, &err_offset);
    if (!initial.empty()) net::write(socket, http::make_chunk(net::buffer(initial)), ec);
    socket.non_blocking(true, ec);
    char probe[256];
    while (!ec && !stopping.load()) {
      std::this_thread::sleep_for(kFollowPoll);
      // The client sends nothing while following: a read that completes means it closed.
      beast::error_code rec;
      const std::size_t n = socket.read_some(net::buffer(probe), rec);
      if (rec != net::error::would_block || n > 0) break;
      std::string more = ReadFrom(files.stdout_path, &out_offset);
      more += ReadFrom(files.stderr_path, &err_offset);
      if (!more.empty()) {
        socket.non_blocking(false, ec);
        net::write(socket, http::make_chunk(net::buffer(more)), ec);
        socket.non_blocking(true, ec);
      }
    }
    socket.non_blocking(false, ec);
    net::write(socket, http::make_chunk_last(), ec);
    return false;
  }

  struct Connection {
    std::unique_ptr<tcp::socket> socket;
    std::thread thread;
    std::atomic<bool> done{false};
  };

  const std::string root_dir;
  const std::string address;
  const uint16_t port;
  net::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::atomic<bool> stopping{false};
  std::thread accept_thread;
  Mutex mu;
  std::list<Connection> connections GUARDED_BY(mu);
  uint16_t bound_port = 0;
};

LogServer::LogServer(std::string root_dir, std::string address, uint16_t port)
    : impl_(std::make_unique<Impl>(std::move(root_dir), std::move(address), port)) {}

LogServer::~LogServer() { Stop(); }

Status LogServer::Start() {
  beast::error_code ec;
  const auto address = net::ip::make_address(impl_->address, ec);
  if (ec) return Status(Code::kInvalid, "bad address \"" + impl_->address + "\": " + ec.message());
  const tcp::endpoint ep(address, impl_->port);
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status(Code::kUnavailable, "cannot listen on " + impl_->address + ":" +
                                          std::to_string(impl_->port) + ": " + ec.message());
  }
  impl_->bound_port = impl_->acceptor.local_endpoint().port();
  impl_->accept_thread = std::thread([this] { impl_->AcceptLoop(); });
  return Status::Ok();
}

uint16_t LogServer::port() const { return impl_->bound_port; }

void LogServer::Stop() {
  if (!impl_->accept_thread.joinable()) return;
  impl_->stopping.store(true);
  beast::error_code ec;
  // Wakes the blocked accept (shutdown of a listening socket makes accept fail on Linux).
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
  impl_->accept_thread.join();
  impl_->acceptor.close(ec);
  std::list<Impl::Connection> connections;
  {
    MutexLock lock(impl_->mu);
    for (Impl::Connection& c : impl_->connections) {
      ::shutdown(c.socket->native_handle(), SHUT_RDWR);  // wakes a blocked read; follow loops see stopping
    }
    connections.splice(connections.end(), impl_->connections);  // the elements (and their addresses) move
  }
  for (Impl::Connection& c : connections) c.thread.join();  // unlocked: each one's MarkDone takes mu
}

}  // namespace rcsim
