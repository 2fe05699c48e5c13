#include "tests/etcd_fixture/etcd_process.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>

namespace rcsim {
namespace {

TEST(EtcdProcessTest, StartsHealthyOnLoopbackAndCleansUp) {
  std::string dir;
  {
    auto etcd = EtcdProcess::Start();
    ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
    EXPECT_TRUE((*etcd)->running());
    EXPECT_EQ((*etcd)->endpoint(), "http://127.0.0.1:" + std::to_string((*etcd)->client_port()));
    EXPECT_NE((*etcd)->client_port(), (*etcd)->peer_port());
    dir = (*etcd)->data_dir();
    EXPECT_TRUE(std::filesystem::exists(dir));
    EXPECT_EQ(kill((*etcd)->pid(), 0), 0);
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(EtcdProcessTest, RestartKeepsPortAndDataDir) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  const int port = (*etcd)->client_port();
  const std::string dir = (*etcd)->data_dir();
  const pid_t first = (*etcd)->pid();
  (*etcd)->Stop();
  EXPECT_FALSE((*etcd)->running());
  EXPECT_TRUE(std::filesystem::exists(dir));
  ASSERT_TRUE((*etcd)->Restart().ok());
  EXPECT_EQ((*etcd)->client_port(), port);
  EXPECT_EQ((*etcd)->data_dir(), dir);
  EXPECT_NE((*etcd)->pid(), first);
}

TEST(EtcdProcessTest, PauseFreezesUntilResume) {
  auto etcd = EtcdProcess::Start();
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  (*etcd)->Pause();
  EXPECT_TRUE((*etcd)->paused());
  std::ifstream in("/proc/" + std::to_string((*etcd)->pid()) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(stat.rfind(')'), std::string::npos);
  EXPECT_EQ(stat[stat.rfind(')') + 2], 'T') << stat;
  (*etcd)->Resume();
  EXPECT_FALSE((*etcd)->paused());
  // Stop() of a paused server resumes it first, so SIGTERM ends it within the grace period.
  (*etcd)->Pause();
  const auto start = std::chrono::steady_clock::now();
  (*etcd)->Stop();
  EXPECT_FALSE((*etcd)->running());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(9));
}

TEST(EtcdProcessTest, MissingBinaryFailsWithLog) {
  EtcdProcessOptions options;
  options.binary = "/nonexistent/etcd";
  options.start_timeout = std::chrono::seconds(5);
  auto etcd = EtcdProcess::Start(options);
  ASSERT_FALSE(etcd.ok());
  EXPECT_EQ(etcd.status().code(), Code::kUnavailable);
}

TEST(EtcdProcessTest, ClusterElectsOneLeaderAndAnotherAfterItIsKilled) {
  auto cluster = EtcdProcess::StartCluster(3);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto& members = *cluster;
  ASSERT_EQ(members.size(), 3u);
  EXPECT_EQ(EtcdProcess::Endpoints(members),
            members[0]->endpoint() + "," + members[1]->endpoint() + "," + members[2]->endpoint());
  auto leaders = [&] {
    int n = 0;
    for (auto& m : members) n += m->IsLeader() ? 1 : 0;
    return n;
  };
  auto poll = [](const std::function<bool()>& pred) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!pred() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return pred();
  };
  ASSERT_TRUE(poll([&] { return leaders() == 1; }));
  int leader = 0;
  while (!members[leader]->IsLeader()) ++leader;
  members[leader]->Kill();
  EXPECT_FALSE(members[leader]->IsLeader());
  EXPECT_TRUE(poll([&] { return leaders() == 1; })) << "the two left elect a new leader";
  ASSERT_TRUE(members[leader]->Restart().ok());
  EXPECT_TRUE(members[leader]->Healthy());
}

// A port of 127.0.0.1 held by a listening socket for the object's lifetime: as another process's server
// that took a port between our pick and etcd's bind.
class TakenPort {
 public:
  TakenPort() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ >= 0 && bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 && listen(fd_, 1) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  TakenPort(const TakenPort&) = delete;
  TakenPort& operator=(const TakenPort&) = delete;
  ~TakenPort() {
    if (fd_ >= 0) close(fd_);
  }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// A port picker whose pick number `when` (1-based; 0: every pick) has `taken` at `index`, as if another
// process took that port before etcd bound it. Counts the picks in *picks.
std::function<std::vector<int>(int)> PickerTaking(int when, std::size_t index, int taken, int* picks) {
  return [=](int n) {
    std::vector<int> ports = PickFreePorts(n);
    if ((++*picks == when || when == 0) && index < ports.size()) ports[index] = taken;
    return ports;
  };
}

// CI failed at random with "cannot listen on 127.0.0.1:P: Address already in use": a port picked free
// was taken before the server bound it. The first pick here is a port in use; Start tries new ones.
TEST(EtcdProcessTest, PortRaceLostAtStartTriesNewPorts) {
  TakenPort taken;
  ASSERT_GT(taken.port(), 0);
  int picks = 0;
  EtcdProcessOptions o;
  o.pick_ports = PickerTaking(1, 0, taken.port(), &picks);  // the client port
  auto etcd = EtcdProcess::Start(o);
  ASSERT_TRUE(etcd.ok()) << etcd.status().ToString();
  EXPECT_EQ(picks, 2);
  EXPECT_NE((*etcd)->client_port(), taken.port());
  EXPECT_TRUE((*etcd)->Healthy());
}

TEST(EtcdProcessTest, PortRaceLostAtClusterStartTriesNewPortsWithoutWaitingForQuorum) {
  TakenPort taken;
  ASSERT_GT(taken.port(), 0);
  int picks = 0;
  EtcdProcessOptions o;
  o.pick_ports = PickerTaking(1, 4, taken.port(), &picks);  // m2's client port
  auto members = EtcdProcess::StartCluster(3, o);
  ASSERT_TRUE(members.ok()) << members.status().ToString();
  EXPECT_EQ(picks, 2);
  for (const auto& m : *members) {
    EXPECT_NE(m->client_port(), taken.port());
    EXPECT_TRUE(m->Healthy());
  }
}

TEST(EtcdProcessTest, PortInUseOnEveryAttemptFailsWithEtcdsReason) {
  TakenPort taken;
  ASSERT_GT(taken.port(), 0);
  int picks = 0;
  EtcdProcessOptions o;
  o.pick_ports = PickerTaking(0, 0, taken.port(), &picks);
  auto etcd = EtcdProcess::Start(o);
  ASSERT_FALSE(etcd.ok());
  EXPECT_EQ(picks, 5);
  EXPECT_NE(etcd.status().message().find("address already in use"), std::string::npos)
      << etcd.status().ToString();
}

TEST(EtcdProcessTest, PickFreeLoopbackPortReturnsAPort) {
  int port = PickFreeLoopbackPort();
  EXPECT_GT(port, 0);
  EXPECT_LT(port, 65536);
}

}  // namespace
}  // namespace rcsim
