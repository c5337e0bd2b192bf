#include "specgen/route_path.h"

#include <algorithm>
#include <cctype>

namespace plimsoll::specgen {
namespace {

Error Why(std::string reason) {
  return Failure(ErrorCode::kInvalidArgument, std::move(reason));
}

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> segments;
  path.remove_prefix(1);  // the leading '/'
  while (true) {
    size_t slash = path.find('/');
    segments.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return segments;
}

bool IsTemplatedSegment(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}' &&
         segment.find_first_of("{}", 1) == segment.size() - 1;
}

std::string Lower(std::string_view text) {
  std::string lowered(text);
  std::transform(lowered.begin(), lowered.end(), lowered.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lowered;
}

}  // namespace

Expected<std::string> AllowPathFor(std::string_view path_template) {
  if (path_template.empty() || path_template.front() != '/') {
    return Why("its path does not start with '/'");
  }
  for (unsigned char c : path_template) {
    if (c < 0x20 || c == 0x7f || c == ' ') {
      return Why("its path holds whitespace or a control character");
    }
  }
  for (char c : std::string_view(";?#%*\\")) {
    if (path_template.find(c) != std::string_view::npos) {
      return Why(std::string("its path holds '") + c +
                 "', which a grant's path cannot hold (the broker refuses it)");
    }
  }
  std::vector<std::string_view> segments = Segments(path_template);
  std::string allow;
  for (size_t i = 0; i < segments.size(); ++i) {
    std::string_view segment = segments[i];
    if (segment == "." || segment == "..") {
      return Why("its path has a '" + std::string(segment) + "' segment");
    }
    if (segment.empty() && i + 1 < segments.size()) {
      return Why("its path has an empty segment ('//')");
    }
    allow += '/';
    if (IsTemplatedSegment(segment)) {
      allow += '*';
    } else if (segment.find_first_of("{}") != std::string_view::npos) {
      return Why("its templated part \"" + std::string(segment) +
                 "\" is not a whole segment, and '*' stands only for a whole one");
    } else {
      allow += segment;
    }
  }
  return allow;
}

std::vector<std::string> TemplateNames(std::string_view path_template) {
  std::vector<std::string> names;
  if (path_template.empty() || path_template.front() != '/') return names;
  for (std::string_view segment : Segments(path_template)) {
    if (IsTemplatedSegment(segment)) names.emplace_back(segment.substr(1, segment.size() - 2));
  }
  return names;
}

Expected<ServerUrl> SplitServerUrl(std::string_view url) {
  if (url.find_first_of("{}") != std::string_view::npos) {
    return Why("it is templated (server variables)");
  }
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return Why("it is relative (no scheme://host)");
  std::string scheme = Lower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") return Why("its scheme is not http or https");
  std::string_view rest = url.substr(scheme_end + 3);
  size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view path =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (authority.empty()) return Why("it has no host");
  if (authority.find('@') != std::string_view::npos) return Why("it carries user information");
  for (unsigned char c : authority) {
    if (!(std::isalnum(c) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']')) {
      return Why("its host is not a plain host name or address");
    }
  }
  if (path.find_first_of("?#") != std::string_view::npos) {
    return Why("it has a query or a fragment");
  }
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (!path.empty()) {
    auto checked = AllowPathFor(path);
    if (!checked.ok() || *checked != path) {
      return Why("its path \"" + std::string(path) + "\" is not a plain path");
    }
  }
  return ServerUrl{scheme + "://" + Lower(authority), std::string(path)};
}

bool IsLoopbackOrigin(std::string_view origin) {
  size_t host_start = origin.find("://");
  if (host_start == std::string_view::npos) return false;
  std::string_view host = origin.substr(host_start + 3);
  if (host.starts_with("[")) return host.starts_with("[::1]");
  host = host.substr(0, host.find(':'));
  return host == "localhost" || (host.starts_with("127.") &&
                                 host.find_first_not_of("0123456789.") == std::string_view::npos);
}

}  // namespace plimsoll::specgen
