#include "backends/process/container_logs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace rcsim {
namespace {

namespace fs = std::filesystem;

class ContainerLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rcsim-container-logs-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes one instance's logs, dated `age` seconds ago.
  void Write(const std::string& pod_dir, const std::string& container, const std::string& id,
             const std::string& out, const std::string& err, int age) {
    const fs::path dir = fs::path(root_) / "pods" / pod_dir / container;
    fs::create_directories(dir);
    const auto when = fs::file_time_type::clock::now() - std::chrono::seconds(age);
    for (const auto& [suffix, text] : {std::pair{".stdout.log", out}, std::pair{".stderr.log", err}}) {
      const fs::path p = dir / (id + suffix);
      std::ofstream(p) << text;
      fs::last_write_time(p, when);
    }
    fs::last_write_time(dir, when);
  }

  std::string root_;
};

TEST_F(ContainerLogsTest, CurrentAndPreviousInstanceStdoutThenStderr) {
  Write("default_web_uid1", "main", "a-1", "one\ntwo\n", "oops\n", 20);
  Write("default_web_uid1", "main", "a-2", "three\n", "", 10);
  auto current = FindContainerLogs(root_, "default", "web", "main", false);
  ASSERT_TRUE(current.ok()) << current.status().ToString();
  EXPECT_EQ(ReadContainerLogs(*current, std::nullopt), "three\n");
  auto previous = FindContainerLogs(root_, "default", "web", "main", true);
  ASSERT_TRUE(previous.ok());
  EXPECT_EQ(ReadContainerLogs(*previous, std::nullopt), "one\ntwo\noops\n");
  EXPECT_EQ(ReadContainerLogs(*previous, 2), "two\noops\n");
  EXPECT_EQ(ReadContainerLogs(*previous, 1), "oops\n");
  EXPECT_EQ(ReadContainerLogs(*previous, 0), "");
  EXPECT_EQ(ReadContainerLogs(*previous, 10), "one\ntwo\noops\n");
}

TEST_F(ContainerLogsTest, ARecreatedPodUnderTheSameNameIsTheNewestDirectory) {
  Write("default_web_old", "main", "b-1", "old\n", "", 30);
  Write("default_web_new", "main", "b-2", "new\n", "", 5);
  Write("default_webby_x", "main", "b-3", "not this pod\n", "", 1);
  auto found = FindContainerLogs(root_, "default", "web", "main", false);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(ReadContainerLogs(*found, std::nullopt), "new\n");
}

TEST_F(ContainerLogsTest, MissingPodContainerOrPreviousIsNotFoundAndBadNamesInvalid) {
  Write("default_web_uid1", "main", "c-1", "x", "y", 5);
  EXPECT_EQ(FindContainerLogs(root_, "default", "nope", "main", false).status().code(), Code::kNotFound);
  EXPECT_EQ(FindContainerLogs(root_, "default", "web", "side", false).status().code(), Code::kNotFound);
  EXPECT_EQ(FindContainerLogs(root_, "default", "web", "main", true).status().code(), Code::kNotFound);
  EXPECT_EQ(FindContainerLogs(root_, "default", "..", "main", false).status().code(), Code::kInvalid);
  EXPECT_EQ(FindContainerLogs(root_, "a_b", "web", "main", false).status().code(), Code::kInvalid);
  // A last line without a newline still ends before the other stream starts.
  auto found = FindContainerLogs(root_, "default", "web", "main", false);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(ReadContainerLogs(*found, std::nullopt), "x\ny");
}

}  // namespace
}  // namespace rcsim
