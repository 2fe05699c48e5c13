#include "backends/http/request_info.h"

#include <gtest/gtest.h>

#include <string>

namespace rcsim {
namespace {

std::string Labels(const RequestInfo& r) {
  return r.verb + "|" + r.group + "|" + r.version + "|" + r.resource + "|" + r.subresource + "|" + r.scope +
         (r.long_running ? "|long" : "");
}

std::string Of(std::string_view method, std::string_view target, std::string_view content_type = "") {
  return Labels(ClassifyRequest(method, target, content_type));
}

TEST(RequestInfoTest, VerbsAreKubeApiserversLabelValues) {
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/default/pods/a"), "GET||v1|pods||resource");
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/default/pods?labelSelector=a%3Db"), "LIST||v1|pods||namespace");
  EXPECT_EQ(Of("GET", "/api/v1/pods"), "LIST||v1|pods||cluster");
  EXPECT_EQ(Of("GET", "/api/v1/pods?resourceVersion=5&watch=true"), "WATCH||v1|pods||cluster|long");
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/x/replicationcontrollers?watch=1"),
            "WATCH||v1|replicationcontrollers||namespace|long");
  EXPECT_EQ(Of("GET", "/api/v1/watch/namespaces/x/pods/a"), "WATCH||v1|pods||resource|long");
  EXPECT_EQ(Of("POST", "/api/v1/namespaces/x/pods"), "POST||v1|pods||namespace");
  EXPECT_EQ(Of("PUT", "/api/v1/namespaces/x/pods/a"), "PUT||v1|pods||resource");
  EXPECT_EQ(Of("PATCH", "/api/v1/namespaces/x/pods/a", "application/merge-patch+json"),
            "PATCH||v1|pods||resource");
  EXPECT_EQ(Of("PATCH", "/api/v1/namespaces/x/pods/a", "application/apply-patch+yaml; charset=utf-8"),
            "APPLY||v1|pods||resource");
  EXPECT_EQ(Of("DELETE", "/api/v1/namespaces/x/pods/a"), "DELETE||v1|pods||resource");
  EXPECT_EQ(Of("DELETE", "/api/v1/namespaces/x/pods?labelSelector=a"),
            "DELETECOLLECTION||v1|pods||namespace");
}

TEST(RequestInfoTest, SubresourcesGroupsAndNamespaces) {
  EXPECT_EQ(Of("PUT", "/api/v1/namespaces/x/replicationcontrollers/r/status"),
            "PUT||v1|replicationcontrollers|status|resource");
  EXPECT_EQ(Of("POST", "/api/v1/namespaces/x/pods/a/binding"), "POST||v1|pods|binding|resource");
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/x/pods/a/log?follow=true"), "GET||v1|pods|log|resource|long");
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/kube-system"), "GET||v1|namespaces||resource");
  EXPECT_EQ(Of("GET", "/api/v1/namespaces"), "LIST||v1|namespaces||cluster");
  EXPECT_EQ(Of("PUT", "/api/v1/namespaces/x/finalize"), "PUT||v1|namespaces|finalize|resource");
  EXPECT_EQ(Of("GET", "/api/v1/nodes/n1"), "GET||v1|nodes||resource");
  EXPECT_EQ(Of("PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l"),
            "PUT|coordination.k8s.io|v1|leases||resource");
  EXPECT_EQ(Of("POST", "/api/v1/namespaces/x/pods/a/eviction"), "POST||v1|pods|eviction|resource");
  EXPECT_EQ(Of("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"),
            "POST|authorization.k8s.io|v1|selfsubjectaccessreviews||cluster");
}

TEST(RequestInfoTest, UnknownPathsAndResourcesDoNotGrowTheLabelSet) {
  EXPECT_EQ(Of("GET", "/healthz"), "GET||||/healthz|");
  EXPECT_EQ(ClassifyRequest("GET", "/readyz?verbose", "").subresource, "/readyz");
  EXPECT_EQ(ClassifyRequest("GET", "/metrics", "").subresource, "/metrics");
  EXPECT_EQ(ClassifyRequest("GET", "/random/abc", "").subresource, "other");
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/x/secrets/s"), "GET||v1|other||resource");
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/x/pods/a/exec"), "GET||v1|pods|other|resource");
  EXPECT_EQ(Of("BREW", "/api/v1/pods"), "other||v1|pods||cluster");
}

}  // namespace
}  // namespace rcsim
