// The grants file text and the preamble of a Spec (specgen.h).
#include <nlohmann/json.hpp>

#include "specgen/specgen.h"
#include "specgen/summary.h"

namespace plimsoll::specgen {
namespace {

// A double-quoted scalar: JSON's escapes are YAML's too, so one quoting
// serves both formats (invalid UTF-8 becomes U+FFFD).
std::string Quoted(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

std::string Heading(const Spec& spec) {
  std::string title = OneLine(spec.title);
  std::string version = OneLine(spec.version);
  return "\"" + (title.empty() ? spec.profile : title) + "\"" +
         (version.empty() ? "" : " " + version) + " (OpenAPI " + OneLine(spec.openapi) + ")";
}

// The request path's template of the first route granted by `allow`.
std::string TemplateOf(const Spec& spec, const std::string& allow) {
  for (const Route& route : spec.routes) {
    if (route.allow == allow) return route.method + " " + route.path;
  }
  return allow;
}

std::string ParameterList(const std::vector<Parameter>& parameters, std::string_view in) {
  std::string list;
  for (const Parameter& parameter : parameters) {
    if (parameter.in != in) continue;
    if (!list.empty()) list += ", ";
    list += OneLine(parameter.name);
    if (parameter.required && in != "path") list += " required";
  }
  return list;
}

}  // namespace

std::string RenderProfileYaml(const Spec& spec) {
  std::string text;
  text += "# A grant profile made by `plimsoll specgen` from " + Heading(spec) + ".\n";
  text += "# Before use: name the callers in allowed_callers, add the token source (static or\n";
  text += "# jwt) and check base_url (docs/grants.md, docs/specgen.md).\n";
  text += "profiles:\n";
  text += "  " + Quoted(spec.profile) + ":\n";
  text += "    base_url: " + Quoted(spec.base_url) + "\n";
  text += "    allow:\n";
  for (const std::string& entry : spec.allow) text += "      - " + Quoted(entry) + "\n";
  text += "    allowed_callers: [" + Quoted(kFillIn) + "]\n";
  if (!spec.batch_of.empty()) {
    text += "    batch_of:\n";
    for (const BatchHint& hint : spec.batch_of) {
      text += "      " + Quoted(hint.item) + ": " + Quoted(hint.collection) + "\n";
    }
  }
  return text;
}

std::string RenderProfileJson(const Spec& spec) {
  nlohmann::ordered_json profile;
  profile["base_url"] = spec.base_url;
  profile["allow"] = spec.allow;
  profile["allowed_callers"] = nlohmann::ordered_json::array({std::string(kFillIn)});
  if (!spec.batch_of.empty()) {
    nlohmann::ordered_json batch_of = nlohmann::ordered_json::object();
    for (const BatchHint& hint : spec.batch_of) batch_of[hint.item] = hint.collection;
    profile["batch_of"] = batch_of;
  }
  nlohmann::ordered_json file;
  file["profiles"][spec.profile] = profile;
  return file.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::vector<std::string> PreambleLines(const Spec& spec) {
  std::vector<std::string> lines;
  lines.push_back("You may call these routes of the API " + Heading(spec) +
                  "; a {name} in a path is a parameter to fill in, and \"required\" marks a "
                  "query parameter the route needs:");
  for (const Route& route : spec.routes) {
    std::string path_parameters = ParameterList(route.parameters, "path");
    std::string query_parameters = ParameterList(route.parameters, "query");
    std::string line = route.method + " " + route.path;
    if (!path_parameters.empty() || !query_parameters.empty()) {
      line += " (";
      if (!path_parameters.empty()) line += "path: " + path_parameters;
      if (!path_parameters.empty() && !query_parameters.empty()) line += "; ";
      if (!query_parameters.empty()) line += "query: " + query_parameters;
      line += ")";
    }
    if (!route.summary.empty()) line += ": " + route.summary;
    lines.push_back(line);
  }
  for (const BatchHint& hint : spec.batch_of) {
    lines.push_back("To read many items, prefer one " + TemplateOf(spec, hint.collection) +
                    " to one " + TemplateOf(spec, hint.item) + " per item.");
  }
  lines.push_back(
      "Your code calls them with host.get(path) and host.post(path, body) in JavaScript, "
      "plimsoll_host.get(path) and plimsoll_host.post(path, body) in Python, or over HTTP at "
      "the Unix socket /run/plimsoll/api.sock; no credential is needed or available (the host "
      "adds it outside the sandbox).");
  return lines;
}

std::string RenderPreamble(const Spec& spec, bool as_comment) {
  std::string text;
  for (const std::string& line : PreambleLines(spec)) {
    text += (as_comment ? "# " : "") + line + "\n";
  }
  return text;
}

}  // namespace plimsoll::specgen
