// DescriptionToJson: the body of `GET /v1/describe` (SPEC §4).
#include <string>
#include <utility>
#include <vector>

#include "plimsoll/wire.h"
#include "wire/json_writer.h"

namespace plimsoll {
namespace {

using wire::OrderedJson;

using NamedValues = std::vector<std::pair<std::string, std::string>>;

OrderedJson WriteNamedValues(const NamedValues& values) {
  OrderedJson out = OrderedJson::array();
  for (const auto& [name, value] : values) {
    OrderedJson entry = OrderedJson::object();
    entry["name"] = name;
    entry["value"] = value;
    out.push_back(std::move(entry));
  }
  return out;
}

OrderedJson WriteEvidence(const Evidence& evidence) {
  OrderedJson out = OrderedJson::object();
  out["tier"] = TierName(evidence.tier);
  out["summary"] = evidence.summary;
  out["all_checks_passed"] = evidence.AllChecksPassed();
  OrderedJson checks = OrderedJson::array();
  for (const EvidenceCheck& check : evidence.checks) {
    OrderedJson entry = OrderedJson::object();
    entry["name"] = check.name;
    entry["passed"] = check.passed;
    entry["detail"] = check.detail;
    checks.push_back(std::move(entry));
  }
  out["checks"] = std::move(checks);
  out["facts"] = WriteNamedValues(evidence.facts);
  out["collected_unix_ms"] = evidence.collected_unix_ms;
  out["generation"] = evidence.generation;
  out["environment"] = evidence.environment;
  return out;
}

bool Accepts(const Capabilities& capabilities, PayloadKind kind) {
  for (PayloadKind accepted : capabilities.payloads) {
    if (accepted == kind) return true;
  }
  return false;
}

OrderedJson WriteCapabilities(const Capabilities& capabilities) {
  OrderedJson out = OrderedJson::object();
  OrderedJson payloads = OrderedJson::array();
  for (PayloadKind kind : capabilities.payloads) payloads.push_back(PayloadKindName(kind));
  out["payloads"] = std::move(payloads);
  OrderedJson languages = OrderedJson::array();
  if (Accepts(capabilities, PayloadKind::kJavascript)) languages.push_back("javascript");
  if (Accepts(capabilities, PayloadKind::kPython)) languages.push_back("python");
  out["languages"] = std::move(languages);
  out["projects"] = Accepts(capabilities, PayloadKind::kProject);
  // Module runs go where projects go (core/module_project.h).
  out["modules"] = Accepts(capabilities, PayloadKind::kProject);
  out["sessions"] = capabilities.sessions;
  out["grants"] = capabilities.grants;
  return out;
}

// The tier a run would get now: the evidence's, never above the claim.
Tier CurrentTier(const Description& description, const std::optional<Evidence>& evidence) {
  if (!evidence) return Tier::kUnknown;
  if (CompareTiers(evidence->tier, description.tier) > 0) return description.tier;
  return evidence->tier;
}

}  // namespace

namespace wire {
OrderedJson WriteLimits(const Limits& limits) {
  OrderedJson out = OrderedJson::object();
  out["memory_bytes"] = limits.memory_bytes;
  out["cpus_millis"] = limits.cpus_millis;
  out["pids"] = limits.pids;
  out["tmp_bytes"] = limits.tmp_bytes;
  out["work_bytes"] = limits.work_bytes;
  out["output_cap_bytes"] = limits.output_cap_bytes;
  out["snippet_timeout_default_ms"] = limits.snippet_timeout_default_ms;
  out["snippet_timeout_max_ms"] = limits.snippet_timeout_max_ms;
  out["project_timeout_default_ms"] = limits.project_timeout_default_ms;
  out["project_timeout_max_ms"] = limits.project_timeout_max_ms;
  out["run_ceiling_ms"] = limits.run_ceiling_ms;
  out["max_code_bytes"] = limits.max_code_bytes;
  out["max_project_files"] = limits.max_project_files;
  out["max_project_bytes"] = limits.max_project_bytes;
  out["max_artifacts"] = limits.max_artifacts;
  out["max_artifact_bytes"] = limits.max_artifact_bytes;
  return out;
}
}  // namespace wire

namespace {

OrderedJson WriteImage(const ImageInfo& image) {
  OrderedJson out = OrderedJson::object();
  out["name"] = image.name;
  out["default"] = image.is_default;
  out["environment"] = image.environment;
  out["tier"] = TierName(image.tier);
  out["confirmed"] = image.confirmed;
  out["languages"] = image.contents.languages;
  OrderedJson packages = OrderedJson::array();
  for (const ImagePackage& package : image.contents.packages) {
    packages.push_back(
        {{"name", package.name}, {"version", package.version}, {"source", package.source}});
  }
  out["packages"] = std::move(packages);
  return out;
}

}  // namespace

std::string DescriptionToJson(const Description& description,
                              const std::optional<Evidence>& evidence,
                              const std::vector<ImageInfo>& images) {
  OrderedJson out = OrderedJson::object();
  out["protocol"] = kProtocol;
  out["provider"] = description.provider;
  out["tier"] = TierName(CurrentTier(description, evidence));
  out["claimed_tier"] = TierName(description.tier);
  out["environment"] = description.environment;
  out["evidence"] = evidence ? WriteEvidence(*evidence) : OrderedJson(nullptr);
  out["capabilities"] = WriteCapabilities(description.capabilities);
  out["limits"] = wire::WriteLimits(description.limits);
  OrderedJson sessions = OrderedJson::object();
  sessions["enabled"] = description.capabilities.sessions;
  out["sessions"] = std::move(sessions);
  out["details"] = WriteNamedValues(description.details);
  if (!images.empty()) {
    OrderedJson list = OrderedJson::array();
    for (const ImageInfo& image : images) list.push_back(WriteImage(image));
    out["images"] = std::move(list);
  }
  return wire::Dump(out);
}

}  // namespace plimsoll
