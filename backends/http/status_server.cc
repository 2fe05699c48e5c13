#include "backends/http/status_server.h"

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

#include "backends/tls/tls_or_tcp_stream.h"

namespace rcsim {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

}  // namespace

struct StatusServer::Impl {
  explicit Impl(StatusServerOptions o) : options(std::move(o)) {}

  http::response<http::string_body> Answer(const http::request<http::string_body>& req) {
    http::response<http::string_body> res;
    res.version(req.version());
    res.keep_alive(req.keep_alive());
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    const std::string target(req.target());
    const std::string path = target.substr(0, target.find('?'));
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      res.result(http::status::method_not_allowed);
      res.body() = "method not allowed\n";
    } else if (path == "/healthz" || path == "/livez") {
      res.body() = "ok";
    } else if (path == "/readyz") {
      Status s = options.ready ? options.ready() : Status::Ok();
      res.result(s.ok() ? http::status::ok : http::status::service_unavailable);
      res.body() = s.ok() ? "ok" : "not ready: " + s.message() + "\n";
    } else if (path == "/metrics") {
      res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
      res.body() = options.metrics ? options.metrics() : "";
    } else {
      res.result(http::status::not_found);
      res.body() = "404 page not found\n";
    }
    res.prepare_payload();
    return res;
  }

  // One connection: requests answered in turn (keep-alive), every read and write bounded by 5 s.
  struct Session : std::enable_shared_from_this<Session> {
    Session(Impl* server, tcp::socket socket)
        : server(server), stream(std::move(socket), server->options.tls.get()) {}
    void Start() {
      if (!stream.is_tls()) return Read();
      stream.expires_after(std::chrono::seconds(5));
      stream.async_handshake(asio::ssl::stream_base::server,
                             [self = shared_from_this()](beast::error_code ec) {
                               if (ec) return self->Close();
                               self->Read();
                             });
    }
    void Read() {
      req = {};
      stream.expires_after(std::chrono::seconds(5));
      http::async_read(stream, buffer, req, [self = shared_from_this()](beast::error_code ec, size_t) {
        if (ec) return self->Close();
        self->res = self->server->Answer(self->req);
        http::async_write(self->stream, self->res, [self](beast::error_code ec2, size_t) {
          if (ec2 || !self->res.keep_alive()) return self->Close();
          self->Read();
        });
      });
    }
    void Close() {
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    }
    Impl* server;
    TlsOrTcpStream stream;
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    http::response<http::string_body> res;
  };

  void Accept() {
    acceptor.async_accept(ioc, [this](beast::error_code ec, tcp::socket socket) {
      if (stopping.load()) return;
      if (ec) {
        // e.g. out of file descriptors: back off instead of spinning.
        retry.expires_after(std::chrono::milliseconds(50));
        retry.async_wait([this](beast::error_code) {
          if (!stopping.load()) Accept();
        });
        return;
      }
      std::make_shared<Session>(this, std::move(socket))->Start();
      Accept();
    });
  }

  StatusServerOptions options;
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  asio::steady_timer retry{ioc};
  std::atomic<bool> stopping{false};
  std::thread thread;
  uint16_t port = 0;
};

StatusServer::StatusServer(StatusServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

StatusServer::~StatusServer() { Stop(); }

Status StatusServer::Start() {
  beast::error_code ec;
  const auto address = asio::ip::make_address(impl_->options.address, ec);
  if (ec)
    return Status(Code::kInvalid, "bad bind address \"" + impl_->options.address + "\": " + ec.message());
  const tcp::endpoint ep(address, impl_->options.port);
  impl_->acceptor.open(ep.protocol(), ec);
  if (!ec) impl_->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor.bind(ep, ec);
  if (!ec) impl_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status(Code::kUnavailable, "cannot listen on " + impl_->options.address + ":" +
                                          std::to_string(impl_->options.port) + ": " + ec.message());
  }
  impl_->port = impl_->acceptor.local_endpoint().port();
  impl_->Accept();
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
  return Status::Ok();
}

uint16_t StatusServer::port() const { return impl_->port; }

void StatusServer::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->stopping.store(true);
  impl_->ioc.stop();  // abandons the connections; their sockets close with the io_context
  impl_->thread.join();
}

}  // namespace rcsim
