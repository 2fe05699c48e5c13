#include "harness/scenario_document.h"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "harness/scenario.h"
#include "harness/scenario_fields.h"

namespace rcsim {
namespace {

using nlohmann::json;

// Thrown inside the front ends only.
struct DocError {
  std::string pointer;
  std::string reason;
  int line = 0;  // 1-based; 0: unknown
  int column = 0;
};

std::string DepthReason() { return "nesting deeper than " + std::to_string(kMaxDocumentDepth) + " levels"; }

// ---- JSON ----

// Tracks the pointer of the value being parsed, refuses duplicate keys and deep nesting.
class JsonChecker {
 public:
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start: {
        std::string ptr = ChildPointer();
        if (depth >= kMaxDocumentDepth) throw DocError{ptr, DepthReason()};
        frames_.push_back({event == json::parse_event_t::array_start, 0, {}, {}, std::move(ptr)});
        break;
      }
      case json::parse_event_t::key: {
        Frame& f = frames_.back();
        f.key = parsed.get<std::string>();
        if (!f.keys.insert(f.key).second) {
          throw DocError{f.pointer + "/" + EscapePointerToken(f.key), "duplicate key"};
        }
        break;
      }
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: frames_.pop_back(); break;
      case json::parse_event_t::value:
        if (!frames_.empty() && frames_.back().is_array) ++frames_.back().next_index;
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool is_array = false;
    std::size_t next_index = 0;
    std::string key;
    std::set<std::string> keys;
    std::string pointer;
  };
  std::string ChildPointer() {
    if (frames_.empty()) return "";
    Frame& f = frames_.back();
    if (f.is_array) return f.pointer + "/" + std::to_string(f.next_index++);
    return f.pointer + "/" + EscapePointerToken(f.key);
  }
  std::vector<Frame> frames_;
};

// ---- YAML ----

constexpr std::size_t kMaxYamlNodes = 1'000'000;

// Whether `s` is valid UTF-8 (nlohmann's serializer checks it strictly).
bool IsUtf8(const std::string& s) {
  try {
    (void)json(s).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

bool IsNullScalar(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// A plain scalar typed as YAML 1.2's core schema does.
json ResolvePlain(const std::string& s, const std::string& pointer, const YAML::Mark& mark) {
  auto fail = [&](std::string why) -> json {
    throw DocError{pointer, std::move(why), mark.line + 1, mark.column + 1};
  };
  if (IsNullScalar(s)) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kOct("0o[0-7]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  static const std::regex kSpecial(R"([-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))");
  auto integer = [&](std::string_view digits, int base, bool negative) -> json {
    uint64_t u = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), u, base);
    if (ec != std::errc() || p != digits.data() + digits.size()) return fail("integer out of range: " + s);
    if (!negative) {
      if (u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
      return u;
    }
    if (u > static_cast<uint64_t>(INT64_MAX) + 1) return fail("integer out of range: " + s);
    return static_cast<int64_t>(0 - u);
  };
  if (std::regex_match(s, kInt)) {
    std::string_view d = s;
    bool negative = d[0] == '-';
    if (d[0] == '-' || d[0] == '+') d.remove_prefix(1);
    return integer(d, 10, negative);
  }
  if (std::regex_match(s, kOct)) return integer(std::string_view(s).substr(2), 8, false);
  if (std::regex_match(s, kHex)) return integer(std::string_view(s).substr(2), 16, false);
  if (std::regex_match(s, kFloat)) {
    errno = 0;
    double d = std::strtod(s.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(d)) return fail("number out of range: " + s);
    return d;
  }
  if (std::regex_match(s, kSpecial)) return fail("not a finite number: " + s);
  return s;
}

class YamlToJson : public YAML::EventHandler {
 public:
  json TakeRoot() { return std::move(root_); }
  std::map<std::string, std::pair<int, int>> TakeLocations() { return std::move(locations_); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (ExpectingKey()) throw Error(Top().pointer, "a mapping key must be a string", mark);
    std::string ptr = BeginValue(mark);
    Attach(nullptr, anchor);
    (void)ptr;
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    if (ExpectingKey()) throw Error(Top().pointer, "a mapping key must be a string", mark);
    std::string ptr = BeginValue(mark);
    if (it == anchors_.end()) throw Error(ptr, "unknown alias", mark);
    nodes_ += CountNodes(it->second);
    if (nodes_ > kMaxYamlNodes)
      throw Error(ptr, "document too large (aliases expand to over 1000000 nodes)", mark);
    Attach(it->second, 0);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    // YAML passes bytes through; JSON text (and every report) must be UTF-8.
    if (!IsUtf8(value)) {
      const std::string at = stack_.empty() || Top().pointer.empty() ? "/" : Top().pointer;
      throw Error(at, "invalid UTF-8 in a scalar", mark);
    }
    if (ExpectingKey()) {
      Frame& f = Top();
      f.key = value;
      f.expecting_key = false;
      std::string ptr = f.pointer + "/" + EscapePointerToken(value);
      if (!f.keys.insert(value).second) throw Error(ptr, "duplicate key", mark);
      locations_[ptr] = {mark.line + 1, mark.column + 1};
      return;
    }
    std::string ptr = BeginValue(mark);
    json v;
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      v = value;
    } else {
      v = ResolvePlain(value, ptr.empty() ? "/" : ptr, mark);
    }
    Attach(std::move(v), anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor, /*is_map=*/false);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor, /*is_map=*/true);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    json value;
    bool is_map = false;
    bool expecting_key = true;
    std::string key;
    std::set<std::string> keys;
    std::string pointer;
    YAML::anchor_t anchor = 0;
  };

  static DocError Error(const std::string& ptr, std::string reason, const YAML::Mark& mark) {
    return DocError{ptr.empty() ? "/" : ptr, std::move(reason), mark.line + 1, mark.column + 1};
  }
  static std::size_t CountNodes(const json& j) {
    std::size_t n = 1;
    if (j.is_structured()) {
      for (const json& c : j) n += CountNodes(c);
    }
    return n;
  }
  Frame& Top() { return stack_.back(); }
  bool ExpectingKey() const { return !stack_.empty() && stack_.back().is_map && stack_.back().expecting_key; }

  // The pointer of the value that starts at `mark`; records the location of sequence items.
  std::string BeginValue(const YAML::Mark& mark) {
    if (++nodes_ > kMaxYamlNodes) throw Error("/", "document too large (over 1000000 nodes)", mark);
    if (stack_.empty()) return "";
    Frame& f = Top();
    if (f.is_map) return f.pointer + "/" + EscapePointerToken(f.key);
    std::string ptr = f.pointer + "/" + std::to_string(f.value.size());
    locations_[ptr] = {mark.line + 1, mark.column + 1};
    return ptr;
  }
  void Open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    if (ExpectingKey()) throw Error(Top().pointer, "a mapping key must be a string", mark);
    std::string ptr = BeginValue(mark);
    if (stack_.size() >= static_cast<std::size_t>(kMaxDocumentDepth)) throw Error(ptr, DepthReason(), mark);
    if (stack_.empty()) locations_[""] = {mark.line + 1, mark.column + 1};
    Frame f;
    f.value = is_map ? json::object() : json::array();
    f.is_map = is_map;
    f.pointer = std::move(ptr);
    f.anchor = anchor;
    stack_.push_back(std::move(f));
  }
  void Close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    Attach(std::move(f.value), f.anchor);
  }
  void Attach(json v, YAML::anchor_t anchor) {
    if (anchor != 0) anchors_[anchor] = v;
    if (stack_.empty()) {
      root_ = std::move(v);
      return;
    }
    Frame& f = Top();
    if (f.is_map) {
      f.value[f.key] = std::move(v);
      f.expecting_key = true;
    } else {
      f.value.push_back(std::move(v));
    }
  }

  std::vector<Frame> stack_;
  json root_;
  std::map<YAML::anchor_t, json> anchors_;
  std::map<std::string, std::pair<int, int>> locations_;
  std::size_t nodes_ = 0;
};

std::string Located(const std::string& file, int line, int column) {
  if (line <= 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

bool IsPlainSafe(const std::string& s, bool flow) {
  static const std::regex kSafe("[A-Za-z0-9_/][-A-Za-z0-9 _./;,()+']*");
  if (!std::regex_match(s, kSafe) || s.back() == ' ') return false;
  if (flow && s.find(',') != std::string::npos) return false;
  try {
    return ResolvePlain(s, "", YAML::Mark()).is_string();
  } catch (const DocError&) {
    return false;
  }
}

using ordered_json = nlohmann::ordered_json;

std::string YamlScalar(const ordered_json& j, bool flow) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    return IsPlainSafe(s, flow) ? s : j.dump();
  }
  return j.dump();
}

// Small maps and lists of scalars print on one line: `selector: {app: web}`.
bool FitsFlow(const ordered_json& j) {
  if (!j.is_structured() || j.empty() || j.size() > 4) return false;
  std::size_t len = 0;
  for (const auto& [key, value] : j.items()) {
    if (value.is_structured()) return false;
    len += key.size() + YamlScalar(value, true).size() + 2;
  }
  return len < 60;
}

std::string Flow(const ordered_json& j) {
  if (j.empty()) return j.is_object() ? "{}" : "[]";
  std::string out = j.is_object() ? "{" : "[";
  bool first = true;
  for (const auto& [key, value] : j.items()) {
    if (!first) out += ", ";
    first = false;
    if (j.is_object()) out += YamlScalar(ordered_json(key), true) + ": ";
    out += YamlScalar(value, true);
  }
  return out + (j.is_object() ? "}" : "]");
}

void EmitBlock(const ordered_json& j, int indent, std::string* out) {
  std::string pad(static_cast<std::size_t>(indent), ' ');
  if (j.is_object()) {
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) *out += pad;
      first = false;
      *out += YamlScalar(ordered_json(key), false) + ":";
      if (value.is_structured() && !value.empty() && !FitsFlow(value)) {
        *out += "\n" + pad + "  ";
        EmitBlock(value, indent + 2, out);
      } else {
        *out += " " + (value.is_structured() ? Flow(value) : YamlScalar(value, false)) + "\n";
      }
    }
  } else if (j.is_array()) {
    bool first = true;
    for (const ordered_json& item : j) {
      if (!first) *out += pad;
      first = false;
      *out += "- ";
      if (item.is_structured() && !item.empty() && !FitsFlow(item)) {
        EmitBlock(item, indent + 2, out);
      } else {
        *out += (item.is_structured() ? Flow(item) : YamlScalar(item, false)) + "\n";
      }
    }
  } else {
    *out += YamlScalar(j, false) + "\n";
  }
}

}  // namespace

std::string EmitYaml(const nlohmann::ordered_json& value) {
  std::string out;
  if (!value.is_structured() || value.empty() || FitsFlow(value)) {
    return (value.is_structured() ? Flow(value) : YamlScalar(value, false)) + "\n";
  }
  EmitBlock(value, 0, &out);
  return out;
}

std::string EmitYaml(const json& value) { return EmitYaml(nlohmann::ordered_json::parse(value.dump())); }

DocumentFormat FormatOfPath(std::string_view path) {
  auto ends = [&](std::string_view ext) {
    return path.size() >= ext.size() && path.substr(path.size() - ext.size()) == ext;
  };
  return ends(".yaml") || ends(".yml") ? DocumentFormat::kYaml : DocumentFormat::kJson;
}

std::string ScenarioDocument::Error(const std::string& pointer, const std::string& reason) const {
  std::string p = pointer.empty() ? "/" : pointer;
  if (format == DocumentFormat::kYaml) {
    std::string probe = pointer == "/" ? "" : pointer;
    while (true) {
      auto it = locations.find(probe);
      if (it != locations.end())
        return Located(file, it->second.first, it->second.second) + ": " + p + ": " + reason;
      if (probe.empty()) break;
      probe.resize(probe.rfind('/'));
    }
  }
  return file + ": " + p + ": " + reason;
}

Result<ScenarioDocument> ParseJsonDocument(std::string_view text, std::string_view file) {
  ScenarioDocument doc;
  doc.file = std::string(file);
  doc.format = DocumentFormat::kJson;
  try {
    JsonChecker checker;
    doc.value = json::parse(text.begin(), text.end(), std::ref(checker));
  } catch (const DocError& e) {
    return Status(Code::kInvalid, doc.file + ": " + (e.pointer.empty() ? "/" : e.pointer) + ": " + e.reason);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for numbers such as 1e999.
    return Status(Code::kInvalid, doc.file + ": /: invalid JSON: " + e.what());
  }
  return doc;
}

Result<ScenarioDocument> ParseYamlDocument(std::string_view text, std::string_view file) {
  ScenarioDocument doc;
  doc.file = std::string(file);
  doc.format = DocumentFormat::kYaml;
  std::istringstream in{std::string(text)};
  try {
    YAML::Parser parser(in);
    YamlToJson builder;
    if (!parser.HandleNextDocument(builder)) {
      return Status(Code::kInvalid, doc.file + ": /: empty YAML document");
    }
    doc.value = builder.TakeRoot();
    doc.locations = builder.TakeLocations();
    YamlToJson rest;
    if (parser.HandleNextDocument(rest)) {
      return Status(Code::kInvalid,
                    doc.file + ": /: more than one YAML document (give one scenario per file)");
    }
  } catch (const DocError& e) {
    return Status(Code::kInvalid, Located(doc.file, e.line, e.column) + ": " + e.pointer + ": " + e.reason);
  } catch (const YAML::Exception& e) {
    std::string msg = e.msg;
    if (dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr) msg = DepthReason();
    return Status(Code::kInvalid,
                  Located(doc.file, e.mark.line + 1, e.mark.column + 1) + ": /: invalid YAML: " + msg);
  }
  return doc;
}

Result<ScenarioDocument> ParseDocument(std::string_view text, std::string_view file, DocumentFormat format) {
  return format == DocumentFormat::kYaml ? ParseYamlDocument(text, file) : ParseJsonDocument(text, file);
}

Result<ScenarioDocument> LoadDocument(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Code::kInvalid, path + ": cannot read the file");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return Status(Code::kInvalid, path + ": cannot read the file");
  return ParseDocument(buf.str(), path, FormatOfPath(path));
}

}  // namespace rcsim
