// The apiserver fixture itself: it learns the port the server bound (--port 0) and, on a restart, waits
// while another process holds that port.
#include "tests/api_http_contract/apiserver_process.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "tests/etcd_fixture/etcd_process.h"

#ifndef RCSIM_APISERVER_BINARY
#error "RCSIM_APISERVER_BINARY must name the apiserver executable"
#endif

namespace rcsim {
namespace {

// A listening socket on 127.0.0.1:port for the object's lifetime (port() is 0 if it could not bind).
class Listener {
 public:
  explicit Listener(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int on = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));  // past the killed server's TIME_WAITs
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && listen(fd_, 1) == 0) {
      port_ = port;
    }
  }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener() {
    if (fd_ >= 0) close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// CI failed at random with "cannot listen on 127.0.0.1:P: Address already in use": the fixture picked a
// free port and another process took it before the apiserver bound it. Now the server chooses (--port 0)
// and the fixture reads its "listening on" line; a restart keeps that port and waits while it is taken.
TEST(ApiServerProcessTest, PortRaceStartUsesThePortTheServerBoundAndRestartWaitsForItsPort) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  ApiServerProcessOptions o;
  o.binary = RCSIM_APISERVER_BINARY;
  o.etcd_servers = (*etcd)->endpoint();
  auto api = ApiServerProcess::Start(o);
  ASSERT_TRUE(api.ok()) << api.status().ToString();
  const int port = (*api)->port();
  ASSERT_GT(port, 0);
  EXPECT_EQ((*api)->url(), "http://127.0.0.1:" + std::to_string(port));
  EXPECT_NE((*api)->LogTail().find("listening on 127.0.0.1:" + std::to_string(port)), std::string::npos);

  (*api)->Kill();
  auto other = std::make_unique<Listener>(port);  // another process's server takes the port
  ASSERT_EQ(other->port(), port);
  // The other server goes once the restarted apiserver has met it (and exited saying so).
  std::thread release([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((*api)->LogTail().find("Address already in use") == std::string::npos &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    other.reset();
  });
  const Status restarted = (*api)->Restart();
  release.join();
  ASSERT_TRUE(restarted.ok()) << restarted.ToString();
  EXPECT_EQ((*api)->port(), port);
  EXPECT_NE((*api)->LogTail().find("Address already in use"), std::string::npos)
      << "the restart never met the taken port";
}

}  // namespace
}  // namespace rcsim
