#include "client/description_json.h"

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "wire/json_reader.h"

namespace plimsoll::client {
namespace {

using wire::FieldReader;
using wire::Json;
using wire::Problem;

using NamedValues = std::vector<std::pair<std::string, std::string>>;

Tier ReadTier(FieldReader& fields, std::string_view key, Problem& problem) {
  std::string name = fields.String(key, wire::kRequired);
  if (problem) return Tier::kUnknown;
  std::optional<Tier> tier = ParseTier(name);
  if (!tier) problem.Set(fields.PathOf(key) + " \"" + name + "\" is not a tier name.");
  return tier.value_or(Tier::kUnknown);
}

NamedValues ReadNamedValues(FieldReader& fields, std::string_view key, Problem& problem) {
  NamedValues out;
  const Json* array = fields.Array(key, wire::kRequired);
  if (array == nullptr) return out;
  for (size_t i = 0; i < array->size() && !problem; ++i) {
    std::string path = wire::IndexPath(fields.PathOf(key), i);
    const Json& entry = (*array)[i];
    if (!entry.is_object()) {
      problem.Set(path + " is " + std::string(wire::DescribeType(entry)) + ", not an object.");
      break;
    }
    FieldReader entry_fields(entry, path, problem, /*null_is_absent=*/false);
    std::string name = entry_fields.String("name", wire::kRequired);
    std::string value = entry_fields.String("value", wire::kRequired);
    out.emplace_back(std::move(name), std::move(value));
  }
  return out;
}

Evidence ReadEvidence(const Json& object, Problem& problem) {
  Evidence evidence;
  FieldReader fields(object, "evidence", problem, /*null_is_absent=*/false);
  evidence.tier = ReadTier(fields, "tier", problem);
  evidence.summary = fields.String("summary", wire::kRequired);
  evidence.collected_unix_ms = fields.Integer("collected_unix_ms", wire::kRequired);
  // Added with configuration generations: absent from older daemons.
  if (object.contains("generation")) {
    evidence.generation = static_cast<uint64_t>(fields.Integer("generation", wire::kRequired));
  }
  if (object.contains("environment")) {
    evidence.environment = fields.String("environment", wire::kRequired);
  }
  evidence.facts = ReadNamedValues(fields, "facts", problem);
  if (const Json* checks = fields.Array("checks", wire::kRequired)) {
    for (size_t i = 0; i < checks->size() && !problem; ++i) {
      std::string path = wire::IndexPath("evidence.checks", i);
      const Json& entry = (*checks)[i];
      if (!entry.is_object()) {
        problem.Set(path + " is " + std::string(wire::DescribeType(entry)) + ", not an object.");
        break;
      }
      FieldReader check_fields(entry, path, problem, /*null_is_absent=*/false);
      EvidenceCheck check;
      check.name = check_fields.String("name", wire::kRequired);
      check.passed = check_fields.Boolean("passed", wire::kRequired);
      check.detail = check_fields.String("detail", wire::kRequired);
      evidence.checks.push_back(std::move(check));
    }
  }
  return evidence;
}

Capabilities ReadCapabilities(const Json& object, Problem& problem) {
  Capabilities capabilities;
  FieldReader fields(object, "capabilities", problem, /*null_is_absent=*/false);
  if (const Json* payloads = fields.Array("payloads", wire::kRequired)) {
    for (size_t i = 0; i < payloads->size() && !problem; ++i) {
      std::string name =
          wire::ReadString((*payloads)[i], wire::IndexPath("capabilities.payloads", i), problem);
      if (std::optional<PayloadKind> kind = ParsePayloadKind(name)) {
        capabilities.payloads.push_back(*kind);
      }
    }
  }
  capabilities.sessions = fields.Boolean("sessions", wire::kRequired);
  capabilities.grants = fields.Boolean("grants", wire::kRequired);
  return capabilities;
}

Limits ReadLimits(const Json& object, Problem& problem) {
  Limits limits;
  FieldReader fields(object, "limits", problem, /*null_is_absent=*/false);
  limits.memory_bytes = fields.Integer("memory_bytes", wire::kRequired);
  limits.cpus_millis = fields.Integer("cpus_millis", wire::kRequired);
  limits.pids = fields.Integer("pids", wire::kRequired);
  limits.tmp_bytes = fields.Integer("tmp_bytes", wire::kRequired);
  limits.work_bytes = fields.Integer("work_bytes", wire::kRequired);
  limits.output_cap_bytes = fields.Integer("output_cap_bytes", wire::kRequired);
  limits.snippet_timeout_default_ms = fields.Integer("snippet_timeout_default_ms", wire::kRequired);
  limits.snippet_timeout_max_ms = fields.Integer("snippet_timeout_max_ms", wire::kRequired);
  limits.project_timeout_default_ms = fields.Integer("project_timeout_default_ms", wire::kRequired);
  limits.project_timeout_max_ms = fields.Integer("project_timeout_max_ms", wire::kRequired);
  limits.run_ceiling_ms = fields.Integer("run_ceiling_ms", wire::kRequired);
  limits.max_code_bytes = fields.Integer("max_code_bytes", wire::kRequired);
  limits.max_project_files = fields.Integer("max_project_files", wire::kRequired);
  limits.max_project_bytes = fields.Integer("max_project_bytes", wire::kRequired);
  limits.max_artifacts = fields.Integer("max_artifacts", wire::kRequired);
  limits.max_artifact_bytes = fields.Integer("max_artifact_bytes", wire::kRequired);
  return limits;
}

std::vector<std::string> ReadStrings(FieldReader& fields, std::string_view key, Problem& problem) {
  std::vector<std::string> out;
  if (const Json* array = fields.Array(key, wire::kRequired)) {
    for (size_t i = 0; i < array->size() && !problem; ++i) {
      out.push_back(wire::ReadString((*array)[i], wire::IndexPath(fields.PathOf(key), i), problem));
    }
  }
  return out;
}

// One entry of `images`: every field required, each package's too.
ImageInfo ReadImage(const Json& entry, const std::string& path, Problem& problem) {
  ImageInfo image;
  if (!entry.is_object()) {
    problem.Set(path + " is " + std::string(wire::DescribeType(entry)) + ", not an object.");
    return image;
  }
  FieldReader fields(entry, path, problem, /*null_is_absent=*/false);
  image.name = fields.String("name", wire::kRequired);
  image.is_default = fields.Boolean("default", wire::kRequired);
  image.environment = fields.String("environment", wire::kRequired);
  image.tier = ReadTier(fields, "tier", problem);
  image.confirmed = fields.Boolean("confirmed", wire::kRequired);
  image.contents.languages = ReadStrings(fields, "languages", problem);
  if (const Json* packages = fields.Array("packages", wire::kRequired)) {
    for (size_t i = 0; i < packages->size() && !problem; ++i) {
      std::string package_path = wire::IndexPath(fields.PathOf("packages"), i);
      const Json& package = (*packages)[i];
      if (!package.is_object()) {
        problem.Set(package_path + " is " + std::string(wire::DescribeType(package)) +
                    ", not an object.");
        break;
      }
      FieldReader package_fields(package, package_path, problem, /*null_is_absent=*/false);
      ImagePackage read;
      read.name = package_fields.String("name", wire::kRequired);
      read.version = package_fields.String("version", wire::kRequired);
      read.source = package_fields.String("source", wire::kRequired);
      image.contents.packages.push_back(std::move(read));
    }
  }
  return image;
}

Expected<DaemonDescription> ReadDescription(std::string_view body) {
  auto lost = [](const std::string& message) {
    return Failure(ErrorCode::kDataLoss, "The daemon's description is not well-formed: " + message);
  };
  Problem problem;
  std::optional<Json> root = wire::ParseJsonBody(body, problem);
  if (!root) return lost(*problem.message);
  if (!root->is_object()) {
    return lost("the body is " + std::string(wire::DescribeType(*root)) + ".");
  }
  DaemonDescription out;
  FieldReader fields(*root, "", problem, /*null_is_absent=*/false);
  out.protocol = fields.Integer("protocol", wire::kRequired);
  out.description.provider = fields.String("provider", wire::kRequired);
  out.tier = ReadTier(fields, "tier", problem);
  out.description.tier = ReadTier(fields, "claimed_tier", problem);
  out.description.environment = fields.String("environment", wire::kRequired);
  if (const Json* evidence = fields.Find("evidence"); evidence == nullptr) {
    problem.Set("evidence is required.");
  } else if (!evidence->is_null()) {
    if (const Json* object = fields.Object("evidence", wire::kRequired)) {
      out.evidence = ReadEvidence(*object, problem);
    }
  }
  if (const Json* capabilities = fields.Object("capabilities", wire::kRequired)) {
    out.description.capabilities = ReadCapabilities(*capabilities, problem);
  }
  if (const Json* limits = fields.Object("limits", wire::kRequired)) {
    out.description.limits = ReadLimits(*limits, problem);
  }
  out.description.details = ReadNamedValues(fields, "details", problem);
  // Added with several images per daemon: absent from older daemons.
  if (root->contains("images")) {
    if (const Json* images = fields.Array("images", wire::kRequired)) {
      for (size_t i = 0; i < images->size() && !problem; ++i) {
        out.images.push_back(ReadImage((*images)[i], wire::IndexPath("images", i), problem));
      }
    }
  }
  if (problem) return lost(*problem.message);
  return out;
}

}  // namespace

Expected<DaemonDescription> ParseDescriptionJson(std::string_view body) {
  try {
    return ReadDescription(body);
  } catch (const std::exception& error) {
    return Failure(
        ErrorCode::kDataLoss,
        std::string("The daemon's description could not be read: ") + error.what() + ".");
  }
}

}  // namespace plimsoll::client
