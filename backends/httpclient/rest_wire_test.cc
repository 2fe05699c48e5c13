#include "backends/httpclient/rest_wire.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rcsim {
namespace {

using nlohmann::json;

TEST(PercentEncodeTest, KeepsUnreservedAndEscapesTheRest) {
  EXPECT_EQ(PercentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(PercentEncode("app=web,tier in (a,b)"), "app%3Dweb%2Ctier%20in%20%28a%2Cb%29");
  EXPECT_EQ(PercentEncode("a/b?c&d#e%"), "a%2Fb%3Fc%26d%23e%25");
  EXPECT_EQ(PercentEncode("\xC3\xA9"), "%C3%A9");
}

TEST(ResourcePathTest, NamespacedAndClusterScoped) {
  EXPECT_EQ(ResourcePath("pods", "", ""), "/api/v1/pods");
  EXPECT_EQ(ResourcePath("pods", "default", ""), "/api/v1/namespaces/default/pods");
  EXPECT_EQ(ResourcePath("replicationcontrollers", "ns1", "web", "status"),
            "/api/v1/namespaces/ns1/replicationcontrollers/web/status");
  // A name cannot escape its path segment.
  EXPECT_EQ(ResourcePath("pods", "a/b", "../x"), "/api/v1/namespaces/a%2Fb/pods/..%2Fx");
}

TEST(ListQueryTest, OnlySetOptionsInOrder) {
  EXPECT_EQ(ListQuery(ListOptions{}), "");
  ListOptions opts;
  opts.label_selector = LabelSelector::Parse("tier!=db,app=web").value();
  opts.field_name = "p-1";
  opts.limit = 50;
  opts.continue_token = "abc=/+";
  EXPECT_EQ(ListQuery(opts),
            "labelSelector=app%3Dweb%2Ctier%21%3Ddb&fieldSelector=metadata.name%3Dp-1&limit=50&"
            "continue=abc%3D%2F%2B");
  ListOptions exact;
  exact.resource_version = "42";
  exact.resource_version_match = ResourceVersionMatch::kExact;
  EXPECT_EQ(ListQuery(exact), "resourceVersion=42&resourceVersionMatch=Exact");
}

TEST(WatchQueryTest, SelectorsWatchAndVersionButNoPaging) {
  ListOptions opts;
  opts.label_selector = LabelSelector::FromMap({{"app", "web"}});
  opts.limit = 5;
  opts.continue_token = "x";
  EXPECT_EQ(WatchQuery(opts, "42"), "labelSelector=app%3Dweb&watch=true&resourceVersion=42");
  EXPECT_EQ(WatchQuery(ListOptions{}, ""), "watch=true");
}

TEST(DeleteOptionsBodyTest, PreconditionsOrNothing) {
  EXPECT_EQ(DeleteOptionsBody(DeleteOptions{}), "");
  DeleteOptions opts;
  opts.precondition_uid = "u-1";
  opts.precondition_resource_version = "7";
  json j = json::parse(DeleteOptionsBody(opts));
  EXPECT_EQ(j["kind"], "DeleteOptions");
  EXPECT_EQ(j["preconditions"], (json{{"uid", "u-1"}, {"resourceVersion", "7"}}));
  opts.precondition_resource_version.clear();
  EXPECT_EQ(json::parse(DeleteOptionsBody(opts))["preconditions"], (json{{"uid", "u-1"}}));
}

std::string StatusBody(int code, const std::string& reason, const std::string& message) {
  return json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
              {"code", code},     {"reason", reason},   {"message", message}}
      .dump();
}

TEST(StatusFromHttpTest, MapsEveryDocumentedCode) {
  struct Case {
    int http;
    const char* reason;
    Code want;
  };
  const Case cases[] = {
      {400, "BadRequest", Code::kBadRequest},
      {401, "Unauthorized", Code::kUnauthorized},
      {403, "Forbidden", Code::kForbidden},
      {404, "NotFound", Code::kNotFound},
      {405, "MethodNotAllowed", Code::kMethodNotAllowed},
      {409, "AlreadyExists", Code::kAlreadyExists},
      {409, "Conflict", Code::kConflict},
      {410, "Expired", Code::kGone},
      {413, "RequestEntityTooLarge", Code::kRequestTooLarge},
      {415, "UnsupportedMediaType", Code::kBadRequest},
      {422, "Invalid", Code::kInvalid},
      {429, "TooManyRequests", Code::kUnavailable},
      {500, "InternalError", Code::kInternal},
      {502, "", Code::kUnavailable},
      {503, "ServiceUnavailable", Code::kUnavailable},
      {504, "Timeout", Code::kTimeout},
      {418, "", Code::kBadRequest},
  };
  for (const Case& c : cases) {
    Status s = StatusFromHttp(c.http, StatusBody(c.http, c.reason, "msg"));
    EXPECT_EQ(s.code(), c.want) << c.http << " " << c.reason;
    EXPECT_EQ(s.message(), "msg");
  }
}

TEST(StatusFromHttpTest, KeepsInvalidCauses) {
  json body = json::parse(StatusBody(422, "Invalid", "bad rc"));
  body["details"] = {{"causes", json::array({{{"field", "spec.replicas"},
                                              {"reason", "FieldValueInvalid"},
                                              {"message", "must be >= 0"}}})}};
  Status s = StatusFromHttp(422, body.dump());
  ASSERT_EQ(s.code(), Code::kInvalid);
  ASSERT_EQ(s.causes().size(), 1u);
  EXPECT_EQ(s.causes()[0], (StatusCause{"spec.replicas", "FieldValueInvalid", "must be >= 0"}));
}

TEST(StatusFromHttpTest, NonStatusBodyNamesTheCode) {
  Status s = StatusFromHttp(502, "<html>bad gateway</html>");
  EXPECT_EQ(s.code(), Code::kUnavailable);
  EXPECT_EQ(s.message(), "HTTP 502: <html>bad gateway</html>");
  EXPECT_EQ(StatusFromHttp(409, "").code(), Code::kConflict);
  EXPECT_EQ(StatusFromHttp(404, "").message(), "HTTP 404");
}

TEST(DecodeObjectResponseTest, DecodesAPodAndRejectsGarbage) {
  auto pod = DecodeObjectResponse<Pod>(
      R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"n","resourceVersion":"9"},
          "spec":{"containers":[{"name":"c","image":"i"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ((*pod)->metadata.name, "p");
  EXPECT_EQ((*pod)->metadata.resource_version, "9");
  EXPECT_EQ(DecodeObjectResponse<Pod>("{nope").status().code(), Code::kInternal);
  EXPECT_EQ(DecodeObjectResponse<Pod>(R"({"kind":"Status"})").status().code(), Code::kInternal);
}

TEST(DecodeListResponseTest, ItemsVersionAndContinue) {
  auto list = DecodeListResponse<ReplicationController>(
      R"({"kind":"ReplicationControllerList","apiVersion":"v1",
          "metadata":{"resourceVersion":"12","continue":"tok"},
          "items":[{"metadata":{"name":"a","namespace":"n","resourceVersion":"3"},"spec":{"replicas":2}},
                   {"metadata":{"name":"b","namespace":"n","resourceVersion":"5"},"spec":{"replicas":0}}]})");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_EQ(list->resource_version, "12");
  EXPECT_EQ(list->continue_token, "tok");
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]->metadata.name, "a");
  EXPECT_EQ(list->items[0]->spec.replicas, 2);
  EXPECT_EQ(list->items[1]->metadata.resource_version, "5");

  auto empty = DecodeListResponse<Pod>(R"({"metadata":{"resourceVersion":"1"},"items":null})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->items.empty());
  EXPECT_EQ(DecodeListResponse<Pod>(R"({"items":{}})").status().code(), Code::kInternal);
  EXPECT_EQ(DecodeListResponse<Pod>(R"({"items":[{"spec":{"containers":7}}]})").status().code(),
            Code::kInternal);
}

TEST(DecodeWatchLineTest, EventTypes) {
  auto added = DecodeWatchLine<Pod>(R"({"type":"ADDED","object":{"metadata":{"name":"p"}}})");
  ASSERT_TRUE(added.ok());
  EXPECT_EQ(added->type, ApiWatchEvent<Pod>::Type::kAdded);
  EXPECT_EQ(added->object->metadata.name, "p");
  auto modified = DecodeWatchLine<Pod>(R"({"type":"MODIFIED","object":{"metadata":{"name":"p"}}})");
  ASSERT_TRUE(modified.ok());
  EXPECT_EQ(modified->type, ApiWatchEvent<Pod>::Type::kModified);
  auto deleted = DecodeWatchLine<Pod>(R"({"type":"DELETED","object":{"metadata":{"name":"p"}}})");
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted->type, ApiWatchEvent<Pod>::Type::kDeleted);
}

TEST(DecodeWatchLineTest, ErrorGoneAndOtherErrors) {
  auto gone = DecodeWatchLine<Pod>(R"({"type":"ERROR","object":)" +
                                   StatusBody(410, "Expired", "too old resource version") + "}");
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->type, ApiWatchEvent<Pod>::Type::kError);
  EXPECT_EQ(gone->error.code(), Code::kGone);
  EXPECT_EQ(gone->error.message(), "too old resource version");
  auto internal = DecodeWatchLine<Pod>(R"({"type":"ERROR","object":{"kind":"Status","code":500}})");
  ASSERT_TRUE(internal.ok());
  EXPECT_EQ(internal->error.code(), Code::kInternal);
}

TEST(DecodeWatchLineTest, BookmarkCarriesOnlyTheVersion) {
  auto bm = DecodeWatchLine<ReplicationController>(
      R"({"type":"BOOKMARK","object":{"kind":"ReplicationController","metadata":{"resourceVersion":"77"}}})");
  ASSERT_TRUE(bm.ok());
  EXPECT_EQ(bm->type, ApiWatchEvent<ReplicationController>::Type::kBookmark);
  EXPECT_EQ(bm->object->metadata.resource_version, "77");
}

TEST(DecodeWatchLineTest, MalformedLinesAreErrors) {
  EXPECT_EQ(DecodeWatchLine<Pod>("{").status().code(), Code::kInternal);
  EXPECT_EQ(DecodeWatchLine<Pod>("[]").status().code(), Code::kInternal);
  EXPECT_EQ(DecodeWatchLine<Pod>(R"({"type":"ADDED"})").status().code(), Code::kInternal);
  EXPECT_EQ(DecodeWatchLine<Pod>(R"({"type":"RENAMED","object":{}})").status().code(), Code::kInternal);
  EXPECT_EQ(DecodeWatchLine<Pod>(R"({"type":"ADDED","object":{"kind":"Service"}})").status().code(),
            Code::kInternal);
}

}  // namespace
}  // namespace rcsim
