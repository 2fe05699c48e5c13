#include "backends/http/token_auth.h"

#include <fstream>
#include <sstream>

namespace rcsim {
namespace {

bool SecureEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// One CSV record: fields separated by commas, a field may be double-quoted (with "" for a quote).
std::optional<std::vector<std::string>> SplitCsv(std::string_view line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false, in_quotes = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"' && Trim(field).empty()) {
      in_quotes = quoted = true;
      field.clear();
    } else if (c == ',') {
      out.push_back(quoted ? field : Trim(field));
      field.clear();
      quoted = false;
    } else {
      field.push_back(c);
    }
  }
  if (in_quotes) return std::nullopt;
  out.push_back(quoted ? field : Trim(field));
  return out;
}

}  // namespace

Result<TokenAuthenticator> TokenAuthenticator::FromCsvFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(Code::kNotFound, "cannot read token auth file " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return FromCsv(ss.str(), path);
}

Result<TokenAuthenticator> TokenAuthenticator::FromCsv(std::string_view text, const std::string& source) {
  TokenAuthenticator auth;
  int line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    const std::string trimmed = Trim(line);
    if (trimmed.empty() || trimmed[0] == '#') continue;
    const std::string where = source + ":" + std::to_string(line_no);
    std::optional<std::vector<std::string>> f = SplitCsv(trimmed);
    if (!f || f->size() < 3 || (*f)[0].empty() || (*f)[1].empty()) {
      return Status(Code::kInvalid, where + ": expected token,user,uid[,\"group1,group2\"]");
    }
    for (const Entry& e : auth.entries_) {
      if (e.token == (*f)[0]) return Status(Code::kInvalid, where + ": duplicate token");
    }
    TokenUser user{(*f)[1], (*f)[2], {}};
    if (f->size() >= 4) {
      std::string_view groups = (*f)[3];
      while (!groups.empty()) {
        const size_t comma = groups.find(',');
        std::string g = Trim(groups.substr(0, comma));
        if (!g.empty()) user.groups.push_back(std::move(g));
        groups = comma == std::string_view::npos ? std::string_view() : groups.substr(comma + 1);
      }
    }
    auth.Add((*f)[0], std::move(user));
  }
  if (auth.empty()) return Status(Code::kInvalid, source + ": no token in the file");
  return auth;
}

void TokenAuthenticator::Add(std::string token, TokenUser user) {
  entries_.push_back(Entry{std::move(token), std::move(user)});
}

std::optional<TokenUser> TokenAuthenticator::Authenticate(std::string_view h) const {
  constexpr std::string_view kScheme = "bearer";
  if (h.size() <= kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(h[i])) != kScheme[i]) return std::nullopt;
  }
  h.remove_prefix(kScheme.size());
  if (h.front() != ' ') return std::nullopt;
  while (!h.empty() && h.front() == ' ') h.remove_prefix(1);
  while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.remove_suffix(1);
  if (h.empty()) return std::nullopt;
  std::optional<TokenUser> found;
  for (const Entry& e : entries_) {  // no early exit: the time does not depend on which token matched
    if (SecureEquals(h, e.token) && !found) found = e.user;
  }
  return found;
}

bool IsUnauthenticatedPath(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  for (std::string_view p : {"/healthz", "/livez", "/readyz"}) {
    if (path == p || (path.size() > p.size() && path.substr(0, p.size()) == p && path[p.size()] == '/')) {
      return true;
    }
  }
  return false;
}

}  // namespace rcsim
