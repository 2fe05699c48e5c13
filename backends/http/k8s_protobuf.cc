#include "backends/http/k8s_protobuf.h"

#include <google/protobuf/io/coded_stream.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "engine/time.h"

namespace rcsim {
namespace {

using google::protobuf::io::CodedInputStream;
using json = nlohmann::json;

constexpr std::string_view kMagic("k8s\0", 4);

enum class Wire : uint32_t { kVarint = 0, kFixed64 = 1, kLength = 2, kFixed32 = 5 };

enum class Type {
  kString,
  kInt64,
  kBool,
  kMessage,
  kStringMap,  // map<string, string>: repeated entries {1: key, 2: value}
  kTime,       // metav1.Time: {1: seconds, 2: nanos}, as RFC 3339 in JSON
};

struct Message;

struct Field {
  uint32_t number;
  const char* name;
  Type type;
  bool repeated = false;
  // A Go pointer (or a field without omitempty): its zero value is kept. Other fields' zero values are
  // left out, as Go's JSON encoding leaves them out.
  bool keep_zero = false;
  const Message* message = nullptr;
};

struct Message {
  const char* name;
  std::span<const Field> fields;
};

// Field numbers as k8s.io/apimachinery's and k8s.io/api's generated.proto define them.
constexpr std::array kPreconditionsFields{
    Field{1, "uid", Type::kString, false, true},
    Field{2, "resourceVersion", Type::kString, false, true},
};
constexpr Message kPreconditions{"Preconditions", kPreconditionsFields};

constexpr std::array kOwnerReferenceFields{
    Field{1, "kind", Type::kString, false, true},
    Field{3, "name", Type::kString, false, true},
    Field{4, "uid", Type::kString, false, true},
    Field{5, "apiVersion", Type::kString, false, true},
    Field{6, "controller", Type::kBool, false, true},
    Field{7, "blockOwnerDeletion", Type::kBool, false, true},
};
constexpr Message kOwnerReference{"OwnerReference", kOwnerReferenceFields};

constexpr std::array kObjectMetaFields{
    Field{1, "name", Type::kString},
    Field{2, "generateName", Type::kString},
    Field{3, "namespace", Type::kString},
    Field{4, "selfLink", Type::kString},
    Field{5, "uid", Type::kString},
    Field{6, "resourceVersion", Type::kString},
    Field{7, "generation", Type::kInt64},
    Field{8, "creationTimestamp", Type::kTime},
    Field{9, "deletionTimestamp", Type::kTime},
    Field{10, "deletionGracePeriodSeconds", Type::kInt64, false, true},
    Field{11, "labels", Type::kStringMap},
    Field{12, "annotations", Type::kStringMap},
    Field{13, "ownerReferences", Type::kMessage, true, false, &kOwnerReference},
    Field{14, "finalizers", Type::kString, true},
};
constexpr Message kObjectMeta{"ObjectMeta", kObjectMetaFields};

constexpr std::array kNamespaceSpecFields{Field{1, "finalizers", Type::kString, true}};
constexpr Message kNamespaceSpec{"NamespaceSpec", kNamespaceSpecFields};
constexpr std::array kNamespaceStatusFields{Field{1, "phase", Type::kString}};
constexpr Message kNamespaceStatus{"NamespaceStatus", kNamespaceStatusFields};
constexpr std::array kNamespaceFields{
    Field{1, "metadata", Type::kMessage, false, false, &kObjectMeta},
    Field{2, "spec", Type::kMessage, false, false, &kNamespaceSpec},
    Field{3, "status", Type::kMessage, false, false, &kNamespaceStatus},
};
constexpr Message kNamespace{"Namespace", kNamespaceFields};

constexpr std::array kDeleteOptionsFields{
    Field{1, "gracePeriodSeconds", Type::kInt64, false, true},
    Field{2, "preconditions", Type::kMessage, false, true, &kPreconditions},
    Field{3, "orphanDependents", Type::kBool, false, true},
    Field{4, "propagationPolicy", Type::kString, false, true},
    Field{5, "dryRun", Type::kString, true},
};
constexpr Message kDeleteOptions{"DeleteOptions", kDeleteOptionsFields};

constexpr std::array kEvictionFields{
    Field{1, "metadata", Type::kMessage, false, false, &kObjectMeta},
    Field{2, "deleteOptions", Type::kMessage, false, true, &kDeleteOptions},
};
constexpr Message kEviction{"Eviction", kEvictionFields};

// authorization.k8s.io/v1 self reviews (kubectl auth can-i).
constexpr std::array kResourceAttributesFields{
    Field{1, "namespace", Type::kString}, Field{2, "verb", Type::kString},
    Field{3, "group", Type::kString},     Field{4, "version", Type::kString},
    Field{5, "resource", Type::kString},  Field{6, "subresource", Type::kString},
    Field{7, "name", Type::kString},
};
constexpr Message kResourceAttributes{"ResourceAttributes", kResourceAttributesFields};
constexpr std::array kNonResourceAttributesFields{Field{1, "path", Type::kString},
                                                  Field{2, "verb", Type::kString}};
constexpr Message kNonResourceAttributes{"NonResourceAttributes", kNonResourceAttributesFields};
constexpr std::array kSelfSubjectAccessReviewSpecFields{
    Field{1, "resourceAttributes", Type::kMessage, false, true, &kResourceAttributes},
    Field{2, "nonResourceAttributes", Type::kMessage, false, true, &kNonResourceAttributes},
};
constexpr Message kSelfSubjectAccessReviewSpec{"SelfSubjectAccessReviewSpec",
                                               kSelfSubjectAccessReviewSpecFields};
constexpr std::array kSubjectAccessReviewStatusFields{
    Field{1, "allowed", Type::kBool, false, true}, Field{2, "reason", Type::kString},
    Field{3, "evaluationError", Type::kString}, Field{4, "denied", Type::kBool}};
constexpr Message kSubjectAccessReviewStatus{"SubjectAccessReviewStatus", kSubjectAccessReviewStatusFields};
constexpr std::array kSelfSubjectAccessReviewFields{
    Field{1, "metadata", Type::kMessage, false, false, &kObjectMeta},
    Field{2, "spec", Type::kMessage, false, true, &kSelfSubjectAccessReviewSpec},
    Field{3, "status", Type::kMessage, false, false, &kSubjectAccessReviewStatus},
};
constexpr Message kSelfSubjectAccessReview{"SelfSubjectAccessReview", kSelfSubjectAccessReviewFields};
constexpr std::array kSelfSubjectRulesReviewSpecFields{Field{1, "namespace", Type::kString}};
constexpr Message kSelfSubjectRulesReviewSpec{"SelfSubjectRulesReviewSpec",
                                              kSelfSubjectRulesReviewSpecFields};
// A request's status is empty (kubectl sends incomplete: false and no rules); the server fills it in.
constexpr std::array kSubjectRulesReviewStatusFields{Field{3, "incomplete", Type::kBool},
                                                     Field{4, "evaluationError", Type::kString}};
constexpr Message kSubjectRulesReviewStatus{"SubjectRulesReviewStatus", kSubjectRulesReviewStatusFields};
constexpr std::array kSelfSubjectRulesReviewFields{
    Field{1, "metadata", Type::kMessage, false, false, &kObjectMeta},
    Field{2, "spec", Type::kMessage, false, true, &kSelfSubjectRulesReviewSpec},
    Field{3, "status", Type::kMessage, false, false, &kSubjectRulesReviewStatus},
};
constexpr Message kSelfSubjectRulesReview{"SelfSubjectRulesReview", kSelfSubjectRulesReviewFields};

// runtime.Unknown and runtime.TypeMeta, the envelope.
constexpr std::array kTypeMetaFields{
    Field{1, "apiVersion", Type::kString},
    Field{2, "kind", Type::kString},
};
constexpr Message kTypeMeta{"TypeMeta", kTypeMetaFields};

Status Malformed(const std::string& what) {
  return Status(Code::kBadRequest, "malformed protobuf body: " + what);
}

Status Decode(const Message& m, std::string_view bytes, json* out);

// One length-delimited payload of `in`.
bool ReadBytes(CodedInputStream* in, std::string* s) {
  uint32_t len = 0;
  return in->ReadVarint32(&len) && in->ReadString(s, static_cast<int>(len));
}

Status DecodeTime(std::string_view bytes, const std::string& where, int64_t* seconds) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  *seconds = 0;
  while (uint32_t tag = in.ReadTag()) {
    uint64_t v = 0;
    if (static_cast<Wire>(tag & 7) != Wire::kVarint || !in.ReadVarint64(&v)) {
      return Malformed(where + ": not a Time");
    }
    if ((tag >> 3) == 1) {
      *seconds = static_cast<int64_t>(v);
    } else if ((tag >> 3) != 2) {  // nanos: metav1.Time is whole seconds in JSON
      return Malformed(where + ": field " + std::to_string(tag >> 3) + " of a Time");
    }
  }
  return Status::Ok();
}

Status DecodeMapEntry(std::string_view bytes, const std::string& where, json* map) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  std::string key;
  std::string value;
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t n = tag >> 3;
    if (static_cast<Wire>(tag & 7) != Wire::kLength || (n != 1 && n != 2) ||
        !ReadBytes(&in, n == 1 ? &key : &value)) {
      return Malformed(where + ": not a map<string, string> entry");
    }
  }
  (*map)[key] = value;
  return Status::Ok();
}

Status DecodeField(const Field& f, uint32_t wire, CodedInputStream* in, const std::string& where, json* out) {
  const bool length = static_cast<Wire>(wire) == Wire::kLength;
  const bool varint = static_cast<Wire>(wire) == Wire::kVarint;
  switch (f.type) {
    case Type::kString: {
      std::string s;
      if (!length || !ReadBytes(in, &s)) return Malformed(where + " is not a string");
      if (f.repeated) {
        (*out)[f.name].push_back(std::move(s));
      } else if (!s.empty() || f.keep_zero) {
        (*out)[f.name] = std::move(s);
      }
      return Status::Ok();
    }
    case Type::kInt64:
    case Type::kBool: {
      uint64_t v = 0;
      if (!varint || !in->ReadVarint64(&v)) return Malformed(where + " is not a varint");
      if (v == 0 && !f.keep_zero) return Status::Ok();
      if (f.type == Type::kBool) {
        (*out)[f.name] = v != 0;
      } else {
        (*out)[f.name] = static_cast<int64_t>(v);
      }
      return Status::Ok();
    }
    case Type::kTime: {
      std::string s;
      if (!length || !ReadBytes(in, &s)) return Malformed(where + " is not a Time");
      int64_t seconds = 0;
      if (Status st = DecodeTime(s, where, &seconds); !st.ok()) return st;
      if (seconds != 0) (*out)[f.name] = FormatRfc3339(TimePoint(std::chrono::seconds(seconds)));
      return Status::Ok();
    }
    case Type::kStringMap: {
      std::string s;
      if (!length || !ReadBytes(in, &s)) return Malformed(where + " is not a map entry");
      json& map = (*out)[f.name];
      if (map.is_null()) map = json::object();
      return DecodeMapEntry(s, where, &map);
    }
    case Type::kMessage: {
      std::string s;
      if (!length || !ReadBytes(in, &s)) return Malformed(where + " is not a " + f.message->name);
      json sub = json::object();
      if (Status st = Decode(*f.message, s, &sub); !st.ok()) return st;
      if (f.repeated) {
        (*out)[f.name].push_back(std::move(sub));
      } else if (!sub.empty() || f.keep_zero) {
        (*out)[f.name] = std::move(sub);
      }
      return Status::Ok();
    }
  }
  return Malformed(where);
}

Status Decode(const Message& m, std::string_view bytes, json* out) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t number = tag >> 3;
    const Field* field = nullptr;
    for (const Field& f : m.fields) {
      if (f.number == number) field = &f;
    }
    if (field == nullptr) {
      return Status(Code::kBadRequest, "protobuf field " + std::to_string(number) + " of " + m.name +
                                           " is not supported by this server; send the object as JSON");
    }
    const std::string where = std::string(m.name) + "." + field->name;
    if (Status s = DecodeField(*field, tag & 7, &in, where, out); !s.ok()) return s;
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != static_cast<int>(bytes.size())) {
    return Malformed(std::string("truncated ") + m.name);
  }
  return Status::Ok();
}

const Message* SchemaOf(const std::string& api_version, const std::string& kind) {
  if (kind == "Namespace" && api_version == "v1") return &kNamespace;
  if (kind == "DeleteOptions" && (api_version == "v1" || api_version == "meta.k8s.io/v1"))
    return &kDeleteOptions;
  if (kind == "Eviction" && (api_version == "policy/v1" || api_version == "policy/v1beta1"))
    return &kEviction;
  if (api_version == "authorization.k8s.io/v1" && kind == "SelfSubjectAccessReview")
    return &kSelfSubjectAccessReview;
  if (api_version == "authorization.k8s.io/v1" && kind == "SelfSubjectRulesReview")
    return &kSelfSubjectRulesReview;
  return nullptr;
}

}  // namespace

bool IsProtobufContentType(std::string_view content_type) {
  std::string_view t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  return t == kProtobufContentType;
}

Result<ProtobufBody> DecodeK8sProtobuf(std::string_view body) {
  if (!body.starts_with(kMagic)) return Malformed("it does not start with the \"k8s\\0\" envelope");
  body.remove_prefix(kMagic.size());
  CodedInputStream in(reinterpret_cast<const uint8_t*>(body.data()), static_cast<int>(body.size()));
  json type_meta = json::object();
  std::string raw;
  std::string encoding;
  while (uint32_t tag = in.ReadTag()) {
    const uint32_t n = tag >> 3;
    std::string s;
    if (static_cast<Wire>(tag & 7) != Wire::kLength || n < 1 || n > 4 || !ReadBytes(&in, &s)) {
      return Malformed("not a runtime.Unknown envelope");
    }
    if (n == 1) {
      if (Status st = Decode(kTypeMeta, s, &type_meta); !st.ok()) return st;
    } else if (n == 2) {
      raw = std::move(s);
    } else if (n == 3) {
      encoding = std::move(s);
    }  // 4: contentType, empty for protobuf
  }
  if (!in.ConsumedEntireMessage() || in.CurrentPosition() != static_cast<int>(body.size())) {
    return Malformed("truncated envelope");
  }
  if (!encoding.empty()) return Malformed("contentEncoding " + encoding + " is not supported");
  ProtobufBody out;
  const std::string api_version = type_meta.value("apiVersion", "");
  out.kind = type_meta.value("kind", "");
  const Message* schema = SchemaOf(api_version, out.kind);
  if (schema == nullptr) {
    out.unsupported_kind = true;
    if (out.kind.empty()) out.kind = "(no kind)";
    return out;
  }
  out.object = json::object();
  out.object["apiVersion"] = api_version;
  out.object["kind"] = out.kind;
  if (Status s = Decode(*schema, raw, &out.object); !s.ok()) return s;
  return out;
}

}  // namespace rcsim
