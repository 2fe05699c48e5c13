// TlsOrTcpStream: a Beast stream that is plain TCP or TLS over TCP, chosen at construction, so the
// HTTP server and client run one code path for http:// and https://.
//
// It meets Asio's AsyncReadStream/AsyncWriteStream (Beast's http::async_read/async_write take it) and
// forwards the beast::tcp_stream calls the HTTP code makes (timeouts, connect, the socket). Timeouts
// set with expires_after apply to the TCP operations underneath, so they bound a TLS handshake or a
// TLS read as they bound a plain one. TLS closes by closing the socket (no close_notify): HTTP/1.1
// framing (Content-Length, chunked) lets the peer tell a complete message from a truncated one.
//
// Thread-safety: as beast::tcp_stream: use it from its executor (a strand). As with asio::ssl::stream,
// one read and one write may be in flight at once.
#ifndef RCSIM_BACKENDS_TLS_TLS_OR_TCP_STREAM_H_
#define RCSIM_BACKENDS_TLS_TLS_OR_TCP_STREAM_H_

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <utility>

namespace rcsim {

class TlsOrTcpStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;
  using tls_stream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  // `arg` constructs the beast::tcp_stream (a connected socket, or an executor). With `tls` non-null
  // the stream speaks TLS with that context (which must outlive the stream); call async_handshake first.
  template <typename Arg>
  TlsOrTcpStream(Arg&& arg, boost::asio::ssl::context* tls) {
    if (tls != nullptr) {
      tls_.emplace(std::forward<Arg>(arg), *tls);
    } else {
      tcp_.emplace(std::forward<Arg>(arg));
    }
  }

  bool is_tls() const { return tls_.has_value(); }
  // The OpenSSL session (nullptr for plain TCP).
  SSL* ssl() { return tls_ ? tls_->native_handle() : nullptr; }

  boost::beast::tcp_stream& tcp() { return tls_ ? tls_->next_layer() : *tcp_; }
  executor_type get_executor() { return tcp().get_executor(); }
  boost::asio::ip::tcp::socket& socket() { return tcp().socket(); }
  template <typename D>
  void expires_after(D d) {
    tcp().expires_after(d);
  }
  void expires_never() { tcp().expires_never(); }
  void close() { tcp().close(); }

  template <typename Endpoints, typename Handler>
  void async_connect(const Endpoints& endpoints, Handler&& handler) {
    tcp().async_connect(endpoints, std::forward<Handler>(handler));
  }

  // TLS only. handler(error_code).
  template <typename Handler>
  void async_handshake(boost::asio::ssl::stream_base::handshake_type type, Handler&& handler) {
    tls_->async_handshake(type, std::forward<Handler>(handler));
  }

  template <typename MutableBuffers, typename Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) return tls_->async_read_some(buffers, std::forward<Handler>(handler));
    return tcp_->async_read_some(buffers, std::forward<Handler>(handler));
  }

  template <typename ConstBuffers, typename Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) return tls_->async_write_some(buffers, std::forward<Handler>(handler));
    return tcp_->async_write_some(buffers, std::forward<Handler>(handler));
  }

 private:
  std::optional<boost::beast::tcp_stream> tcp_;  // exactly one of the two is set
  std::optional<tls_stream> tls_;
};

}  // namespace rcsim

#endif  // RCSIM_BACKENDS_TLS_TLS_OR_TCP_STREAM_H_
