#include "specgen/specgen.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "base/ascii.h"
#include "specgen/route_path.h"
#include "specgen/summary.h"
#include "specgen/yaml_access.h"

namespace plimsoll::specgen {
namespace {

// The operation keys of an OpenAPI path item, in the specification's order.
constexpr std::array<std::string_view, 8> kMethods = {"get",     "put",  "post",  "delete",
                                                      "options", "head", "patch", "trace"};

Error Invalid(std::string message) {
  return Failure(ErrorCode::kInvalidArgument, std::move(message));
}

using base::AsciiLower;
using base::AsciiUpper;

std::string LeftOut(const std::string& method, const std::string& path, const std::string& why) {
  std::string sentence = "Left out ";
  sentence.append(method).append(" ").append(path).append(": ").append(why).append(".");
  return sentence;
}

std::vector<std::string> Tags(const YAML::Node& operation) {
  std::vector<std::string> tags;
  YAML::Node node = Field(operation, "tags");
  if (node && node.IsSequence()) {
    for (const YAML::Node& tag : node) {
      if (tag.IsScalar()) tags.push_back(tag.Scalar());
    }
  }
  return tags;
}

// The profile name made from info.title: lowercase letters, digits and '-'.
std::string ProfileNameFrom(std::string_view title) {
  std::string name;
  for (unsigned char c : title) {
    if (std::isalnum(c)) {
      name += static_cast<char>(std::tolower(c));
    } else if (!name.empty() && name.back() != '-') {
      name += '-';
    }
    if (name.size() >= 48) break;
  }
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name.empty() ? "api" : name;
}

bool IsProfileName(std::string_view name) {
  if (name.empty() || name.size() > 64 || !std::isalnum(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

// The server URL with each `{variable}` replaced by its default; empty when
// one has none.
std::string WithDefaults(std::string url, const YAML::Node& variables) {
  size_t open;
  while ((open = url.find('{')) != std::string::npos) {
    size_t close = url.find('}', open);
    if (close == std::string::npos) return "";
    std::string name = url.substr(open + 1, close - open - 1);
    std::string value = ScalarOr(Field(Field(variables, name), "default"));
    if (value.empty()) return "";
    url.replace(open, close - open + 1, value);
  }
  return url;
}

// base_url and the path put before every route, from --base-url or the
// document's first server.
struct Base {
  std::string origin;
  std::string prefix;
  std::string server_url;  // the document's first server URL ("" when none)
};

Expected<Base> ChooseBase(const YAML::Node& root, const Options& options,
                          std::vector<std::string>& warnings) {
  Base base;
  const YAML::Node servers = Field(root, "servers");
  const YAML::Node first = servers && servers.IsSequence() && servers.size() > 0
                               ? servers[0]
                               : YAML::Node(YAML::NodeType::Undefined);
  base.server_url = ScalarOr(Field(first, "url"));

  if (!options.base_url.empty()) {
    auto split = SplitServerUrl(options.base_url);  // checked by CheckOptions
    if (!split.ok()) return split.error();
    base.origin = split->origin;
    base.prefix = split->path;
  } else if (base.server_url.empty()) {
    base.origin = std::string(kFillIn);
    warnings.push_back("base_url is left as \"" + std::string(kFillIn) +
                       "\": the document names no server; pass --base-url.");
  } else if (auto split = SplitServerUrl(base.server_url); split.ok()) {
    base.origin = split->origin;
    base.prefix = split->path;
  } else {
    base.origin = std::string(kFillIn);
    std::string substituted = WithDefaults(base.server_url, Field(first, "variables"));
    std::string note;
    if (base.server_url.starts_with("/")) {
      auto path = SplitServerUrl("http://host" + base.server_url);
      if (path.ok()) base.prefix = path->path;
      note = "; the routes keep its path \"" + base.prefix + "\"";
    } else if (auto defaults = SplitServerUrl(substituted); defaults.ok()) {
      base.prefix = defaults->path;
      note = " (its variables' defaults give " + defaults->origin + base.prefix +
             "); the routes keep the path \"" + base.prefix + "\"";
    }
    warnings.push_back("base_url is left as \"" + std::string(kFillIn) +
                       "\": the document's first server URL \"" + base.server_url +
                       "\" gives no origin, since " + split.error().message() + note +
                       "; pass --base-url.");
  }
  if (base.origin != kFillIn && base.origin.starts_with("http://") &&
      !IsLoopbackOrigin(base.origin)) {
    warnings.push_back("base_url " + base.origin +
                       " is cleartext http: a grants file accepts http only on loopback; use "
                       "the API's https origin (--base-url).");
  }
  return base;
}

// The query parameters that carry a credential (apiKey security schemes
// `in: query`): the host attaches credentials, so the preamble never asks
// the agent's code for one.
std::set<std::string> CredentialQueryNames(const YAML::Node& root) {
  std::set<std::string> names;
  const YAML::Node schemes = Field(Field(root, "components"), "securitySchemes");
  if (!schemes || !schemes.IsMap()) return names;
  for (auto scheme = schemes.begin(); scheme != schemes.end(); ++scheme) {
    const YAML::Node value = Resolve(root, scheme->second);
    if (ScalarOr(Field(value, "type")) == "apiKey" && ScalarOr(Field(value, "in")) == "query") {
      names.insert(ScalarOr(Field(value, "name")));
    }
  }
  return names;
}

// Path-level parameters overridden by operation-level ones of the same name
// and location (OpenAPI's rule); only path and query ones are kept, less
// the credential ones.
std::vector<Parameter> Parameters(const YAML::Node& root, const YAML::Node& path_item,
                                  const YAML::Node& operation, const std::string& path,
                                  const std::set<std::string>& credential_names) {
  std::vector<Parameter> declared;
  for (const YAML::Node& list : {Field(path_item, "parameters"), Field(operation, "parameters")}) {
    if (!list || !list.IsSequence()) continue;
    for (YAML::Node entry : list) {
      const YAML::Node parameter = Resolve(root, entry);
      if (!parameter || !parameter.IsMap()) continue;
      Parameter value{ScalarOr(Field(parameter, "name")), ScalarOr(Field(parameter, "in")),
                      IsTrue(Field(parameter, "required"))};
      if (value.name.empty() || (value.in != "path" && value.in != "query")) continue;
      auto same = std::find_if(declared.begin(), declared.end(), [&](const Parameter& p) {
        return p.name == value.name && p.in == value.in;
      });
      if (same != declared.end()) {
        *same = value;
      } else {
        declared.push_back(value);
      }
    }
  }
  std::vector<Parameter> ordered;
  for (const std::string& name : TemplateNames(path)) {
    ordered.push_back(Parameter{name, "path", true});
  }
  for (const Parameter& parameter : declared) {
    if (parameter.in == "query" && !credential_names.contains(parameter.name)) {
      ordered.push_back(parameter);
    }
  }
  return ordered;
}

// The name of a path parameter whose style is matrix (values written
// ";name=value", and the broker refuses ';'), or "".
std::string MatrixPathParameter(const YAML::Node& root, const YAML::Node& path_item,
                                const YAML::Node& operation) {
  for (const YAML::Node& list : {Field(path_item, "parameters"), Field(operation, "parameters")}) {
    if (!list || !list.IsSequence()) continue;
    for (const YAML::Node& entry : list) {
      const YAML::Node parameter = Resolve(root, entry);
      if (ScalarOr(Field(parameter, "in")) == "path" &&
          ScalarOr(Field(parameter, "style")) == "matrix") {
        return ScalarOr(Field(parameter, "name"), "?");
      }
    }
  }
  return "";
}

Expected<std::vector<std::string>> SelectedMethods(const Options& options) {
  if (options.methods.empty()) return std::vector<std::string>{"get", "head"};
  std::vector<std::string> methods;
  for (const std::string& method : options.methods) {
    std::string lower = AsciiLower(method);
    if (std::find(kMethods.begin(), kMethods.end(), lower) == kMethods.end()) {
      return Invalid("--methods: \"" + method +
                     "\" is not a method OpenAPI describes (GET, PUT, POST, DELETE, OPTIONS, "
                     "HEAD, PATCH, TRACE).");
    }
    methods.push_back(lower);
  }
  return methods;
}

bool SameServer(const YAML::Node& servers, const std::string& document_server) {
  if (!servers || !servers.IsSequence() || servers.size() == 0) return true;
  return ScalarOr(Field(servers[0], "url")) == document_server;
}

}  // namespace

Status CheckOptions(const Options& options) {
  if (!options.profile.empty() && !IsProfileName(options.profile)) {
    return Invalid("--profile \"" + options.profile +
                   "\" is not a profile name (letters, digits, '-', '_', '.'; at most 64).");
  }
  auto methods = SelectedMethods(options);
  if (!methods.ok()) return methods.error();
  if (!options.base_url.empty()) {
    auto split = SplitServerUrl(options.base_url);
    if (!split.ok()) {
      return Invalid(
          "--base-url \"" + options.base_url +
          "\" is not an http(s) origin with an optional path: " + split.error().message() + ".");
    }
  }
  return Status::Ok();
}

Expected<Spec> Generate(std::string_view document, const Options& options) {
  PLIMSOLL_RETURN_IF_ERROR(CheckOptions(options));
  try {
    YAML::Node root;
    try {
      root.reset(YAML::Load(std::string(document)));
    } catch (const YAML::ParserException& error) {
      return Invalid("The document is neither YAML nor JSON: line " +
                     std::to_string(error.mark.line + 1) + ", column " +
                     std::to_string(error.mark.column + 1) + ": " + error.msg + ".");
    }
    if (!root.IsMap()) return Invalid("The document is not a YAML or JSON mapping.");
    Spec spec;
    spec.openapi = ScalarOr(Field(root, "openapi"));
    if (spec.openapi.empty() && Field(root, "swagger")) {
      return Invalid("The document is Swagger " + ScalarOr(Field(root, "swagger"), "2") +
                     ", not OpenAPI 3; convert it first (for example with swagger2openapi).");
    }
    if (!spec.openapi.starts_with("3.0") && !spec.openapi.starts_with("3.1")) {
      return Invalid("The document is not OpenAPI 3.0 or 3.1 (its \"openapi\" field is \"" +
                     spec.openapi + "\").");
    }
    YAML::Node info = Field(root, "info");
    if (info && info.IsMap()) {
      spec.title = ScalarOr(Field(info, "title"));
      spec.version = ScalarOr(Field(info, "version"));
    }
    spec.profile = options.profile.empty() ? ProfileNameFrom(spec.title) : options.profile;
    auto methods = SelectedMethods(options);
    if (!methods.ok()) return methods.error();
    auto base = ChooseBase(root, options, spec.warnings);
    if (!base.ok()) return base.error();
    spec.base_url = base->origin;

    const std::set<std::string> credential_names = CredentialQueryNames(root);
    std::set<std::string> only_matched;
    std::set<std::string> allow_seen;
    size_t left_out = 0;
    YAML::Node paths = Field(root, "paths");
    if (paths && !paths.IsMap()) return Invalid("The document's \"paths\" is not a mapping.");
    for (auto entry = paths.begin(); paths && entry != paths.end(); ++entry) {
      const std::string path = ScalarOr(entry->first);
      const YAML::Node item = Resolve(root, entry->second);
      if (!item || !item.IsMap()) continue;
      for (auto field = item.begin(); field != item.end(); ++field) {
        const std::string key = ScalarOr(field->first);
        if (std::find(methods->begin(), methods->end(), key) == methods->end()) continue;
        const YAML::Node operation = field->second;
        if (!operation.IsMap()) continue;
        const std::string method = AsciiUpper(key);
        if (!options.only.empty()) {
          std::vector<std::string> tags = Tags(operation);
          bool kept = false;
          for (const std::string& wanted : options.only) {
            if (wanted == path || std::find(tags.begin(), tags.end(), wanted) != tags.end()) {
              only_matched.insert(wanted);
              kept = true;
            }
          }
          if (!kept) continue;
        }
        if (!SameServer(Field(item, "servers"), base->server_url) ||
            !SameServer(Field(operation, "servers"), base->server_url)) {
          ++left_out;
          spec.warnings.push_back(
              LeftOut(method, path, "it is served from a server of its own, not base_url"));
          continue;
        }
        auto allow_path = AllowPathFor(path);
        if (!allow_path.ok()) {
          ++left_out;
          spec.warnings.push_back(LeftOut(method, path, allow_path.error().message()));
          continue;
        }
        if (std::string matrix = MatrixPathParameter(root, item, operation); !matrix.empty()) {
          ++left_out;
          spec.warnings.push_back(LeftOut(method, path,
                                          "its path parameter \"" + matrix +
                                              "\" has style matrix, whose values start with ';', "
                                              "which the broker refuses"));
          continue;
        }
        Route route;
        route.method = method;
        route.path = base->prefix + path;
        route.allow = method + " " + base->prefix + *allow_path;
        route.parameters = Parameters(root, item, operation, path, credential_names);
        route.summary = OneLineSummary(ScalarOr(Field(operation, "summary")),
                                       ScalarOr(Field(operation, "description")),
                                       ScalarOr(Field(operation, "operationId")));
        if (allow_seen.insert(route.allow).second) spec.allow.push_back(route.allow);
        spec.routes.push_back(std::move(route));
      }
    }
    for (const std::string& wanted : options.only) {
      if (!only_matched.contains(wanted)) {
        spec.warnings.push_back("--only \"" + wanted +
                                "\" matched no selected operation (neither a tag nor a path).");
      }
    }
    if (spec.routes.empty()) {
      std::string methods_named;
      for (const std::string& method : *methods) {
        methods_named += (methods_named.empty() ? "" : ", ") + AsciiUpper(method);
      }
      return Invalid("No operation of the document was selected (methods " + methods_named +
                     (options.only.empty() ? "" : ", with --only") +
                     (left_out > 0 ? "; " + std::to_string(left_out) + " left out" : "") + ").");
    }
    for (const std::string& item : spec.allow) {
      if (!item.starts_with("GET ") || !item.ends_with("/*")) continue;
      std::string collection = item.substr(0, item.size() - 2);
      if (collection == "GET ") collection = "GET /";
      if (allow_seen.contains(collection)) spec.batch_of.push_back(BatchHint{item, collection});
    }
    return spec;
  } catch (const YAML::Exception& error) {
    return Invalid("The document could not be read: " + error.msg + ".");
  } catch (const std::exception& error) {
    return Invalid(std::string("The document could not be read: ") + error.what() + ".");
  }
}

}  // namespace plimsoll::specgen
