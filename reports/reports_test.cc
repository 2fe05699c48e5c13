#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "reports/html_report.h"
#include "reports/json_report.h"
#include "reports/junit_report.h"

namespace rcsim {
namespace {

using std::chrono::seconds;
using ::testing::HasSubstr;

int Count(const std::string& s, const std::string& needle) {
  int n = 0;
  for (std::size_t p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

RunResult Sample(bool passed) {
  RunResult r;
  r.scenario = passed ? "ok-run" : "bad-run";
  r.file = "scenarios/x <&>.json";
  r.seed = 7;
  r.tier = "fast";
  r.passed = passed;
  r.virtual_time = seconds(60);
  r.totals = {{seconds(0), 10, 0, 0}, {seconds(2), 10, 10, 10}, {seconds(30), 10, 5, 5}, {seconds(32), 10, 10, 10}};
  r.events = {{seconds(30), "kill_pods", R"({"at":"30s","kill_pods":{"fraction":0.5}})"}};
  ExpectationOutcome o;
  o.kind = "never_above";
  o.text = R"({"never_above":{"active":4,"controller":"web"}})";
  o.passed = passed;
  o.measured = 10;
  o.detail = "peak 10 active (bound 4)";
  r.expectations = {o};
  return r;
}

TEST(ReportsTest, XmlEscapeCoversMarkupAndControlCharacters) {
  EXPECT_EQ(XmlEscape("a<b>&\"'\x01"), "a&lt;b&gt;&amp;&quot;&apos;?");
}

TEST(ReportsTest, JunitCountsAndEscapes) {
  std::string xml = JunitXml({Sample(true), Sample(false)}, false);
  EXPECT_THAT(xml, HasSubstr("tests=\"2\" failures=\"1\""));
  EXPECT_EQ(Count(xml, "<testcase "), 2);
  EXPECT_EQ(Count(xml, "<failure "), 1);
  EXPECT_THAT(xml, HasSubstr("x &lt;&amp;&gt;.json"));
  EXPECT_THAT(xml, HasSubstr("--seed 7"));
  EXPECT_EQ(xml.find("<&>"), std::string::npos);
}

TEST(ReportsTest, SvgHasThreeSeriesAndEventMarks) {
  std::string svg = SvgPlot(Sample(true));
  EXPECT_EQ(Count(svg, "<polyline class=\"series "), 3);
  EXPECT_EQ(Count(svg, "<g class=\"event-mark\""), 1);
  EXPECT_THAT(svg, HasSubstr("data-scenario=\"ok-run\""));
}

TEST(ReportsTest, HtmlPutsFailuresFirst) {
  std::string html = HtmlReport({Sample(true), Sample(false)});
  EXPECT_LT(html.find("data-scenario=\"bad-run\""), html.find("data-scenario=\"ok-run\""));
  EXPECT_THAT(html, HasSubstr("1 passed, 1 failed"));
}

TEST(ReportsTest, JsonHasMeasuredValuesAndWallField) {
  nlohmann::json j = RunResultToJson(Sample(false));
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["expectations"][0]["measured"], 10);
  EXPECT_EQ(j["totals"]["t"].size(), 4u);
  EXPECT_TRUE(j.contains("wall_seconds"));
  EXPECT_EQ(JsonReportFileName(Sample(true), true), "ok-run-seed7.json");
}

TEST(ReportsTest, DownsampleKeepsPeakAndLastPoint) {
  std::vector<SeriesPoint> s;
  s.reserve(10000);
  for (int i = 0; i < 10000; ++i) s.push_back({seconds(i), 100, i == 5000 ? 500 : i % 100, 0});
  std::vector<SeriesPoint> d = DownsampleSeries(s, 300);
  EXPECT_LE(d.size(), 300u);
  EXPECT_EQ(d.back(), s.back());
  bool peak = false;
  for (const SeriesPoint& p : d) peak = peak || p.active == 500;
  EXPECT_TRUE(peak);
  EXPECT_EQ(DownsampleSeries(s, 20000).size(), s.size());
}

// rcsim run --manager both: the two managers' pod counts as two plots side by side, on one scale.
TEST(ReportsTest, ManagerPairsGetPairedPlotsOnOneScale) {
  RunResult modern = Sample(true), old = Sample(false);
  modern.scenario = "pair";
  modern.manager_kind = "modern";
  old.scenario = "pair.2014";
  old.manager_kind = "2014";
  modern.manager_from_flag = old.manager_from_flag = true;
  old.totals = {{seconds(0), 10, 0, 0}, {seconds(5), 10, 20, 20}, {seconds(40), 10, 10, 10}};
  old.virtual_time = seconds(90);
  std::string html = HtmlReport({modern, old});
  EXPECT_THAT(html, HasSubstr("<table class=\"managers\">"));
  EXPECT_EQ(Count(html, "<div class=\"manager-pair\" data-scenario=\"pair\" data-seed=\"7\">"), 1);
  EXPECT_EQ(Count(html, "class=\"plot manager\""), 2);
  std::size_t m = html.find("data-manager=\"modern\""), o = html.find("data-manager=\"2014\"");
  ASSERT_NE(m, std::string::npos);
  ASSERT_NE(o, std::string::npos);
  EXPECT_LT(m, o);  // modern on the left
  // One count axis for both: the modern plot (peak 10) reaches the 2014 one's 30 too.
  std::string modern_svg = html.substr(m, html.find("</svg>", m) - m);
  std::string old_svg = html.substr(o, html.find("</svg>", o) - o);
  EXPECT_THAT(modern_svg, HasSubstr(">30</text>"));
  EXPECT_THAT(old_svg, HasSubstr(">30</text>"));
  // And one time axis: both end at the longer run's 90s.
  EXPECT_THAT(modern_svg, HasSubstr(">80.00s</text>"));
  // Runs that are not pairs get no paired plot.
  EXPECT_EQ(HtmlReport({Sample(true), Sample(false)}).find("<div class=\"manager-pair\""), std::string::npos);
}

}  // namespace
}  // namespace rcsim
