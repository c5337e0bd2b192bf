#include "plimsoll/request.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <utility>

#include "base/utf8.h"
#include "plimsoll/tier.h"

namespace plimsoll {
namespace {

constexpr size_t kMaxTraceIdLength = 64;
constexpr size_t kMaxNameLength = 128;  // grant profile, cell language
constexpr size_t kMaxPathLength = 4096;
constexpr size_t kMaxSteps = 64;
constexpr size_t kMaxArgvElements = 4096;
constexpr size_t kMaxArgvBytes = 256 * 1024;

Error Bad(std::string message) {
  return Refusal(NotDispatched::kRequest, std::move(message));
}

bool IsControl(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

// Profile names are identifiers an operator writes in a file.
bool IsWellFormedName(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// "sha256:" followed by 64 lowercase hex digits.
bool IsWellFormedEnvironment(std::string_view identity) {
  constexpr std::string_view kPrefix = "sha256:";
  if (identity.size() != kPrefix.size() + 64 || identity.substr(0, kPrefix.size()) != kPrefix) {
    return false;
  }
  for (char c : identity.substr(kPrefix.size())) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status CheckCode(std::string_view field, const std::string& code, const Limits& limits) {
  if (static_cast<int64_t>(code.size()) > limits.max_code_bytes) {
    return Bad(std::string(field) + ".code is " + std::to_string(code.size()) +
               " bytes; the limit is " + std::to_string(limits.max_code_bytes) + " bytes.");
  }
  return Status::Ok();
}

Status CheckProject(const ProjectPayload& project, const Limits& limits) {
  if (static_cast<int64_t>(project.files.size()) > limits.max_project_files) {
    return Bad("The project has " + std::to_string(project.files.size()) + " files; the limit is " +
               std::to_string(limits.max_project_files) + ".");
  }
  int64_t total = 0;
  std::set<std::string_view> seen;
  for (size_t i = 0; i < project.files.size(); ++i) {
    const ProjectFile& file = project.files[i];
    if (auto problem = CheckRelativePath(file.path)) {
      return Bad("project.files[" + std::to_string(i) + "].path " + *problem);
    }
    if (!seen.insert(file.path).second) {
      return Bad("project.files[" + std::to_string(i) + "].path \"" + file.path +
                 "\" repeats an earlier file.");
    }
    total += static_cast<int64_t>(file.path.size() + file.content.size());
    if (total > limits.max_project_bytes) {
      return Bad("The project's files exceed " + std::to_string(limits.max_project_bytes) +
                 " bytes in total.");
    }
  }
  if (project.steps.empty()) return Bad("The project has no steps; give at least one argv list.");
  if (project.steps.size() > kMaxSteps) {
    return Bad("The project has " + std::to_string(project.steps.size()) + " steps; the limit is " +
               std::to_string(kMaxSteps) + ".");
  }
  for (size_t i = 0; i < project.steps.size(); ++i) {
    const auto& argv = project.steps[i];
    std::string where = "project.steps[" + std::to_string(i) + "]";
    if (argv.empty()) return Bad(where + " is empty; a step is a non-empty argv list.");
    if (argv.front().empty()) return Bad(where + "[0] (the program) is empty.");
    if (argv.size() > kMaxArgvElements) return Bad(where + " has too many arguments.");
    size_t bytes = 0;
    for (size_t j = 0; j < argv.size(); ++j) {
      if (argv[j].find('\0') != std::string::npos) {
        return Bad(where + "[" + std::to_string(j) + "] contains a NUL byte.");
      }
      if (!base::IsValidUtf8(argv[j])) {
        return Bad(where + "[" + std::to_string(j) + "] is not valid UTF-8.");
      }
      bytes += argv[j].size();
    }
    if (bytes > kMaxArgvBytes)
      return Bad(where + " is longer than " + std::to_string(kMaxArgvBytes) + " bytes.");
  }
  if (static_cast<int64_t>(project.artifacts.size()) > limits.max_artifacts) {
    return Bad("The project asks for " + std::to_string(project.artifacts.size()) +
               " artifacts; the limit is " + std::to_string(limits.max_artifacts) + ".");
  }
  std::set<std::string_view> seen_artifacts;
  for (size_t i = 0; i < project.artifacts.size(); ++i) {
    if (auto problem = CheckRelativePath(project.artifacts[i])) {
      return Bad("project.artifacts[" + std::to_string(i) + "] " + *problem);
    }
    if (!seen_artifacts.insert(project.artifacts[i]).second) {
      return Bad("project.artifacts[" + std::to_string(i) + "] repeats an earlier artifact.");
    }
  }
  return Status::Ok();
}

Status CheckModule(const ModulePayload& module) {
  const std::string& model = module.model;
  if (model.empty() || model.size() > 64 ||
      model.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
    return Bad(
        "module.model must be 1-64 characters of [a-z0-9_-]: the name of a model the "
        "image carries.");
  }
  if (module.rows.size() > kMaxModuleRows) {
    return Bad("module.rows has " + std::to_string(module.rows.size()) + " rows; at most " +
               std::to_string(kMaxModuleRows) + " are allowed.");
  }
  for (size_t i = 0; i < module.rows.size(); ++i) {
    if (module.rows[i].size() > kMaxModuleRowValues) {
      return Bad("module.rows[" + std::to_string(i) + "] has more than " +
                 std::to_string(kMaxModuleRowValues) + " values.");
    }
    for (double value : module.rows[i]) {
      if (!std::isfinite(value)) {
        return Bad("module.rows[" + std::to_string(i) + "] holds a value that is not finite.");
      }
    }
  }
  for (const auto& [name, value] :
       {std::pair{"end_time", module.end_time}, {"step", module.step}}) {
    if (!std::isfinite(value) || value <= 0) {
      return Bad(std::string("module.") + name + " must be a positive number of seconds.");
    }
  }
  return Status::Ok();
}

// A module run is a project underneath (core/module_project.h): its timeouts.
bool HasProjectTimeouts(PayloadKind kind) {
  return kind == PayloadKind::kProject || kind == PayloadKind::kModule;
}

int64_t TimeoutMaxMs(PayloadKind kind, const Limits& limits) {
  const int64_t max_ms =
      HasProjectTimeouts(kind) ? limits.project_timeout_max_ms : limits.snippet_timeout_max_ms;
  return std::min(max_ms, limits.run_ceiling_ms);
}

}  // namespace

std::string_view PayloadKindName(PayloadKind kind) {
  switch (kind) {
    case PayloadKind::kJavascript:
      return "javascript";
    case PayloadKind::kPython:
      return "python";
    case PayloadKind::kProject:
      return "project";
    case PayloadKind::kCell:
      return "cell";
    case PayloadKind::kModule:
      return "module";
  }
  return "javascript";
}

std::optional<PayloadKind> ParsePayloadKind(std::string_view name) {
  for (PayloadKind kind : {PayloadKind::kJavascript, PayloadKind::kPython, PayloadKind::kProject,
                           PayloadKind::kCell, PayloadKind::kModule}) {
    if (PayloadKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

int Request::PayloadCount() const {
  return static_cast<int>(javascript.has_value()) + static_cast<int>(python.has_value()) +
         static_cast<int>(project.has_value()) + static_cast<int>(cell.has_value()) +
         static_cast<int>(module.has_value());
}

std::optional<PayloadKind> Request::kind() const {
  if (PayloadCount() != 1) return std::nullopt;
  if (javascript) return PayloadKind::kJavascript;
  if (python) return PayloadKind::kPython;
  if (project) return PayloadKind::kProject;
  if (module) return PayloadKind::kModule;
  return PayloadKind::kCell;
}

bool IsWellFormedTraceId(std::string_view trace_id) {
  if (trace_id.empty() || trace_id.size() > kMaxTraceIdLength) return false;
  for (char c : trace_id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsWellFormedImageName(std::string_view name) {
  return !name.empty() && name.size() <= 64 && name.front() != '-' &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string_view::npos;
}

Status CheckImageServed(std::string_view requested, std::string_view served) {
  if (requested.empty() || requested == served) return Status::Ok();
  const std::string named = "The request names the image \"" + std::string(requested) + "\"; ";
  return Refusal(NotDispatched::kRequest,
                 served.empty() ? named + "this sandbox serves one unnamed image."
                                : named + "this sandbox serves \"" + std::string(served) + "\".");
}

std::optional<std::string> CheckRelativePath(std::string_view path) {
  if (path.empty()) return "is empty.";
  if (path.size() > kMaxPathLength)
    return "is longer than " + std::to_string(kMaxPathLength) + " bytes.";
  if (path.front() == '/')
    return "\"" + std::string(path) + "\" is absolute; paths are relative to /work.";
  for (unsigned char c : path) {
    if (c == '\0') return "contains a NUL byte.";
    if (c == '\\') return "contains a backslash.";
    if (IsControl(c)) return "contains a control character.";
  }
  if (!base::IsValidUtf8(path)) return "is not valid UTF-8.";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (segment.empty()) return "\"" + std::string(path) + "\" has an empty segment.";
    if (segment == "..") return "\"" + std::string(path) + "\" contains \"..\".";
    if (segment == ".") return "\"" + std::string(path) + "\" contains \".\".";
    start = end + 1;
  }
  return std::nullopt;
}

int64_t ResolvedTimeoutMs(const Request& request, const Limits& limits) {
  std::optional<PayloadKind> kind = request.kind();
  const int64_t max_ms = TimeoutMaxMs(kind.value_or(PayloadKind::kJavascript), limits);
  if (request.timeout_ms > 0) return std::min(request.timeout_ms, max_ms);
  const bool project = kind && HasProjectTimeouts(*kind);
  const int64_t default_ms =
      project ? limits.project_timeout_default_ms : limits.snippet_timeout_default_ms;
  return std::min(default_ms, max_ms);
}

Expected<Request> ValidateRequest(const Request& request, const Limits& limits, bool in_session) {
  if (request.protocol != kProtocol) {
    return Refusal(NotDispatched::kProtocol, "This daemon speaks protocol " +
                                                 std::to_string(kProtocol) + "; the request says " +
                                                 std::to_string(request.protocol) + ".");
  }
  Request out = request;
  if (!IsWellFormedTraceId(out.trace_id)) out.trace_id.clear();

  int payloads = request.PayloadCount();
  if (payloads == 0) {
    return Bad(
        "The request has no payload; give exactly one of javascript, python, project, cell.");
  }
  if (payloads > 1) {
    return Bad("The request has " + std::to_string(payloads) +
               " payloads; give exactly one of javascript, python, project, cell.");
  }

  if (!request.minimum_isolation.empty()) {
    auto floor = ParseTier(request.minimum_isolation);
    if (!floor) {
      return Bad("minimum_isolation \"" + request.minimum_isolation +
                 "\" is not a tier; use process, container, kernel or vm.");
    }
    if (!IsRunnableTier(*floor)) {
      return Bad("minimum_isolation \"" + request.minimum_isolation +
                 "\" is not a floor; use process, container, kernel or vm.");
    }
  }
  if (!request.grant_profile.empty() && !IsWellFormedName(request.grant_profile)) {
    return Bad("grant_profile must be 1-128 characters of letters, digits, '.', '_' or '-'.");
  }
  if (!request.environment.empty() && !IsWellFormedEnvironment(request.environment)) {
    return Bad("environment must be \"sha256:\" followed by 64 lowercase hex digits.");
  }
  if (!request.image.empty() && !IsWellFormedImageName(request.image)) {
    return Bad(
        "image must be 1-64 characters of lowercase letters, digits or '-' (not starting "
        "with '-'): the name of an image the daemon serves.");
  }

  PayloadKind kind = *request.kind();
  const int64_t max_ms = TimeoutMaxMs(kind, limits);
  if (request.timeout_ms > max_ms) {
    return Bad("timeout_ms " + std::to_string(request.timeout_ms) +
               " is above this provider's maximum of " + std::to_string(max_ms) + " ms for " +
               std::string(PayloadKindName(kind)) + " runs.");
  }
  out.timeout_ms = ResolvedTimeoutMs(request, limits);

  switch (kind) {
    case PayloadKind::kJavascript:
      PLIMSOLL_RETURN_IF_ERROR(CheckCode("javascript", request.javascript->code, limits));
      break;
    case PayloadKind::kPython:
      PLIMSOLL_RETURN_IF_ERROR(CheckCode("python", request.python->code, limits));
      break;
    case PayloadKind::kProject:
      PLIMSOLL_RETURN_IF_ERROR(CheckProject(*request.project, limits));
      break;
    case PayloadKind::kCell:
      if (!in_session) return Bad("A cell payload runs only inside a session.");
      if (request.cell->language != "javascript" && request.cell->language != "python") {
        return Bad("cell.language must be \"javascript\" or \"python\".");
      }
      PLIMSOLL_RETURN_IF_ERROR(CheckCode("cell", request.cell->code, limits));
      break;
    case PayloadKind::kModule:
      if (in_session) return Bad("A module payload runs outside sessions only.");
      if (!request.grant_profile.empty()) {
        return Bad("A module run calls no API: it takes no grant profile.");
      }
      PLIMSOLL_RETURN_IF_ERROR(CheckModule(*request.module));
      break;
  }
  return out;
}

Status RefuseUnservedGrant(const Request& request) {
  if (request.grant_profile.empty()) return {};
  return Refusal(NotDispatched::kPermission, ErrorCode::kPermissionDenied,
                 "No grant profile of that name is served to this caller, so nothing ran.");
}

}  // namespace plimsoll
