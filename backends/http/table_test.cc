#include "backends/http/table.h"

#include <gtest/gtest.h>

namespace rcsim {
namespace {

TEST(HumanAgeTest, MatchesKubernetesHumanDuration) {
  EXPECT_EQ(HumanAge(std::chrono::seconds(-5)), "<invalid>");
  EXPECT_EQ(HumanAge(std::chrono::milliseconds(-500)), "0s");
  EXPECT_EQ(HumanAge(std::chrono::seconds(45)), "45s");
  EXPECT_EQ(HumanAge(std::chrono::seconds(119)), "119s");
  EXPECT_EQ(HumanAge(std::chrono::seconds(200)), "3m20s");
  EXPECT_EQ(HumanAge(std::chrono::minutes(5)), "5m");
  EXPECT_EQ(HumanAge(std::chrono::minutes(90)), "90m");
  EXPECT_EQ(HumanAge(std::chrono::minutes(5 * 60 + 7)), "5h7m");
  EXPECT_EQ(HumanAge(std::chrono::hours(30)), "30h");
  EXPECT_EQ(HumanAge(std::chrono::hours(24 * 3 + 4)), "3d4h");
  EXPECT_EQ(HumanAge(std::chrono::hours(24 * 100)), "100d");
  EXPECT_EQ(HumanAge(std::chrono::hours(24 * (365 * 3 + 10))), "3y10d");
  EXPECT_EQ(HumanAge(std::chrono::hours(24 * 365 * 9)), "9y");
}

TEST(AcceptsTableTest, NeedsTheTableMediaTypeOfMetaGroup) {
  EXPECT_TRUE(AcceptsTable("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
  EXPECT_FALSE(AcceptsTable("application/json"));
  EXPECT_FALSE(AcceptsTable("application/json;as=Table;v=v1;g=other.io"));
}

TEST(PodTableTest, ColumnsAndCells) {
  auto pod = std::make_shared<Pod>();
  pod->metadata.name = "web-1";
  pod->metadata.creation_timestamp = TimePoint(std::chrono::hours(1));
  pod->spec.containers = {Container{"a", "img", {}, {}}, Container{"b", "img", {}, {}}};
  pod->status.phase = "Running";
  pod->status.container_statuses.resize(2);
  pod->status.container_statuses[0].name = "a";
  pod->status.container_statuses[0].ready = true;
  pod->status.container_statuses[0].restart_count = 2;
  pod->status.container_statuses[0].state.running = ContainerStateRunning{};
  pod->status.container_statuses[1].name = "b";
  pod->status.container_statuses[1].restart_count = 1;
  TableOptions opts;
  opts.now = TimePoint(std::chrono::hours(1) + std::chrono::seconds(30));
  nlohmann::json t = PodTable({pod}, opts);
  ASSERT_EQ(t["columnDefinitions"].size(), 9u);
  EXPECT_EQ(t["columnDefinitions"][5]["name"], "IP");
  EXPECT_EQ(t["columnDefinitions"][5]["priority"], 1);
  EXPECT_EQ(t["rows"][0]["cells"],
            nlohmann::json({"web-1", "1/2", "Running", "3", "30s", "<none>", "<none>", "<none>", "<none>"}));
  auto deleting = std::make_shared<Pod>(*pod);
  deleting->metadata.deletion_timestamp = opts.now;
  opts.include_columns = false;
  opts.include_object = IncludeObject::kNone;
  nlohmann::json t2 = PodTable({deleting}, opts);
  EXPECT_TRUE(t2["columnDefinitions"].empty());
  EXPECT_EQ(t2["rows"][0]["cells"][2], "Terminating");
  EXPECT_FALSE(t2["rows"][0].contains("object"));
}

// kubectl's printPod: a waiting reason or a termination of a container names the STATUS, the last
// container in status order winning; RESTARTS says how long ago the last one ended.
TEST(PodTableTest, StatusAndRestartsFollowTheContainerStates) {
  TableOptions opts;
  opts.now = TimePoint(std::chrono::hours(2));
  auto make = [&](std::vector<ContainerStatus> statuses) {
    auto pod = std::make_shared<Pod>();
    pod->metadata.name = "p";
    pod->metadata.creation_timestamp = TimePoint(std::chrono::hours(1));
    pod->spec.containers.resize(statuses.size());
    pod->status.phase = "Running";
    pod->status.conditions.push_back(PodCondition{"Ready", "True", {}, "", "", {}});
    pod->status.container_statuses = std::move(statuses);
    return PodTable({pod}, opts)["rows"][0]["cells"];
  };
  ContainerStatus running;
  running.name = "a";
  running.ready = true;
  running.state.running = ContainerStateRunning{};
  ContainerStatus crashing;
  crashing.name = "b";
  crashing.restart_count = 4;
  crashing.state.waiting = ContainerStateWaiting{"CrashLoopBackOff", "back-off 40s", {}};
  ContainerStateTerminated ended;
  ended.exit_code = 137;
  ended.reason = "Error";
  ended.finished_at = opts.now - std::chrono::seconds(90);
  crashing.last_state.terminated = ended;
  nlohmann::json cells = make({running, crashing});
  EXPECT_EQ(cells[1], "1/2");
  EXPECT_EQ(cells[2], "CrashLoopBackOff");
  EXPECT_EQ(cells[3], "4 (90s ago)");

  ContainerStatus completed;
  completed.name = "c";
  completed.state.terminated = ContainerStateTerminated{};
  completed.state.terminated->reason = "Completed";
  EXPECT_EQ(make({completed})[2], "Completed");
  EXPECT_EQ(make({running, completed})[2], "Running") << "Completed while another container runs";
  ContainerStatus no_reason;
  no_reason.name = "d";
  no_reason.state.terminated = ContainerStateTerminated{};
  no_reason.state.terminated->exit_code = 3;
  EXPECT_EQ(make({no_reason})[2], "ExitCode:3");
  no_reason.state.terminated->signal = 9;
  EXPECT_EQ(make({no_reason})[2], "Signal:9");
  ContainerStatus creating;
  creating.name = "e";
  creating.state.waiting = ContainerStateWaiting{"ContainerCreating", "", {}};
  EXPECT_EQ(make({creating})[2], "ContainerCreating");
}

// kubectl get -o wide shows the priority-1 columns: pods IP and NODE, RCs CONTAINERS, IMAGES, SELECTOR.
TEST(TableTest, WideColumns) {
  auto pod = std::make_shared<Pod>();
  pod->metadata.name = "web-1";
  pod->spec.node_name = "node-a";
  pod->status.pod_ip = "10.0.0.7";
  nlohmann::json t = PodTable({pod}, TableOptions());
  EXPECT_EQ(t["rows"][0]["cells"][5], "10.0.0.7");
  EXPECT_EQ(t["rows"][0]["cells"][6], "node-a");

  auto rc = std::make_shared<ReplicationController>();
  rc->metadata.name = "web";
  rc->spec.selector = {{"app", "web"}, {"tier", "fe"}};
  rc->spec.template_ = PodTemplateSpec();
  rc->spec.template_->spec.containers = {Container{"web", "nginx:1", {}, {}},
                                         Container{"log", "busybox", {}, {}}};
  nlohmann::json r = ControllerTable({rc}, TableOptions());
  ASSERT_EQ(r["columnDefinitions"].size(), 8u);
  EXPECT_EQ(r["columnDefinitions"][7]["name"], "Selector");
  EXPECT_EQ(r["rows"][0]["cells"][5], "web,log");
  EXPECT_EQ(r["rows"][0]["cells"][6], "nginx:1,busybox");
  EXPECT_EQ(r["rows"][0]["cells"][7], "app=web,tier=fe");
}

}  // namespace
}  // namespace rcsim
