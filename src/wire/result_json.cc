// ResultToJson / ParseResultJson: the flat answer object of SPEC §4.
#include <string>
#include <vector>

#include "plimsoll/wire.h"
#include "wire/json_reader.h"
#include "wire/json_writer.h"

namespace plimsoll {
namespace {

using wire::FieldReader;
using wire::Json;
using wire::OrderedJson;
using wire::Problem;

OrderedJson WriteRecord(const Record& record) {
  OrderedJson out = OrderedJson::object();
  out["version"] = record.version;
  out["request_sha256"] = record.request_sha256;
  out["result_sha256"] = record.result_sha256;
  out["provider"] = record.provider;
  out["isolation"] = TierName(record.isolation);
  out["environment"] = record.environment;
  out["policy"] = record.policy;
  out["started_unix_ms"] = record.started_unix_ms;
  out["ended_unix_ms"] = record.ended_unix_ms;
  if (record.session) {
    out["session"] = record.session->session_sha256;
    out["sequence"] = record.session->sequence;
    out["previous_sha256"] = record.session->previous_sha256;
  }
  out["record_sha256"] = record.record_sha256;
  return out;
}

OrderedJson WriteStep(const StepResult& step) {
  OrderedJson out = OrderedJson::object();
  out["command"] = step.command;
  out["exit_code"] = step.exit_code;
  out["timed_out"] = step.timed_out;
  out["stdout"] = wire::WriteBytes(step.stdout_bytes);
  out["stderr"] = wire::WriteBytes(step.stderr_bytes);
  out["stdout_truncated"] = step.stdout_truncated;
  out["stderr_truncated"] = step.stderr_truncated;
  out["duration_ms"] = step.duration_ms;
  return out;
}

Tier ReadTier(FieldReader& fields, std::string_view key, Problem& problem) {
  std::string name = fields.String(key, wire::kRequired);
  if (problem) return Tier::kUnknown;
  auto tier = ParseTier(name);
  if (!tier) {
    problem.Set(fields.PathOf(key) + " \"" + name + "\" is not a tier name.");
    return Tier::kUnknown;
  }
  return *tier;
}

Record ReadRecord(const Json& object, Problem& problem) {
  Record record;
  FieldReader fields(object, "record", problem, /*null_is_absent=*/false);
  record.version = fields.Integer("version", wire::kRequired);
  record.request_sha256 = fields.String("request_sha256", wire::kRequired);
  record.result_sha256 = fields.String("result_sha256", wire::kRequired);
  record.provider = fields.String("provider", wire::kRequired);
  record.isolation = ReadTier(fields, "isolation", problem);
  record.environment = fields.String("environment", wire::kRequired);
  record.policy = fields.String("policy", wire::kRequired);
  record.started_unix_ms = fields.Integer("started_unix_ms", wire::kRequired);
  record.ended_unix_ms = fields.Integer("ended_unix_ms", wire::kRequired);
  // The session fields come as a set: all three or none.
  int present = (fields.Find("session") ? 1 : 0) + (fields.Find("sequence") ? 1 : 0) +
                (fields.Find("previous_sha256") ? 1 : 0);
  if (present == 3) {
    SessionLink link;
    link.session_sha256 = fields.String("session", wire::kRequired);
    link.sequence = fields.Integer("sequence", wire::kRequired);
    link.previous_sha256 = fields.String("previous_sha256", wire::kRequired);
    record.session = std::move(link);
  } else if (present != 0) {
    problem.Set(
        "record.session, record.sequence and record.previous_sha256 come together; "
        "the answer has only some of them.");
  }
  record.record_sha256 = fields.String("record_sha256", wire::kRequired);
  return record;
}

StepResult ReadStep(const Json& value, const std::string& path, Problem& problem) {
  StepResult step;
  if (!value.is_object()) {
    problem.Set(path + " must be an object.");
    return step;
  }
  FieldReader fields(value, path, problem, /*null_is_absent=*/false);
  if (const Json* command = fields.Array("command", wire::kRequired)) {
    for (size_t i = 0; i < command->size() && !problem; ++i) {
      step.command.push_back(
          wire::ReadString((*command)[i], wire::IndexPath(fields.PathOf("command"), i), problem));
    }
  }
  step.exit_code = fields.Integer("exit_code", wire::kRequired);
  step.timed_out = fields.Boolean("timed_out", wire::kRequired);
  step.stdout_bytes = fields.Bytes("stdout", wire::kRequired);
  step.stderr_bytes = fields.Bytes("stderr", wire::kRequired);
  step.stdout_truncated = fields.Boolean("stdout_truncated", wire::kRequired);
  step.stderr_truncated = fields.Boolean("stderr_truncated", wire::kRequired);
  step.duration_ms = fields.Integer("duration_ms", wire::kRequired);
  return step;
}

Artifact ReadArtifact(const Json& value, const std::string& path, Problem& problem) {
  Artifact artifact;
  if (!value.is_object()) {
    problem.Set(path + " must be an object.");
    return artifact;
  }
  FieldReader fields(value, path, problem, /*null_is_absent=*/false);
  artifact.path = fields.String("path", wire::kRequired);
  artifact.content = fields.Bytes("content", wire::kRequired);
  artifact.truncated = fields.Boolean("truncated", wire::kRequired);
  return artifact;
}

Display ReadDisplay(const Json& value, const std::string& path, Problem& problem) {
  Display display;
  if (!value.is_object()) {
    problem.Set(path + " must be an object.");
    return display;
  }
  FieldReader fields(value, path, problem, /*null_is_absent=*/false);
  fields.RejectUnknown({"mime", "data", "width", "height"});
  display.mime = fields.String("mime", wire::kRequired);
  display.data = fields.Bytes("data", wire::kRequired);
  // A size, when given, is at least one pixel (absent: not an image).
  const bool has_width = fields.Find("width") != nullptr;
  const bool has_height = fields.Find("height") != nullptr;
  if (has_width) display.width = fields.Integer("width", wire::kRequired);
  if (has_height) display.height = fields.Integer("height", wire::kRequired);
  if (!problem && (display.mime.empty() || (has_width && display.width < 1) ||
                   (has_height && display.height < 1))) {
    problem.Set(path + " needs a mime type, and a width or height given must be at least 1.");
  }
  return display;
}

Advice ReadAdvice(const Json& value, const std::string& path, Problem& problem) {
  Advice advice;
  if (!value.is_object()) {
    problem.Set(path + " must be an object.");
    return advice;
  }
  FieldReader fields(value, path, problem, /*null_is_absent=*/false);
  advice.pattern = fields.String("pattern", wire::kRequired);
  advice.route = fields.String("route", wire::kRequired);
  advice.message = fields.String("message", wire::kRequired);
  advice.extra_calls = fields.Integer("extra_calls", wire::kRequired);
  advice.added_latency_ms = fields.Float("added_latency_ms", wire::kRequired);
  advice.bytes = fields.Integer("bytes", wire::kRequired);
  return advice;
}

BrokerRoute ReadBrokerRoute(const Json& value, const std::string& path, Problem& problem) {
  BrokerRoute row;
  if (!value.is_object()) {
    problem.Set(path + " must be an object.");
    return row;
  }
  FieldReader fields(value, path, problem, /*null_is_absent=*/false);
  row.method = fields.String("method", wire::kRequired);
  row.route = fields.String("route", wire::kRequired);
  row.status = fields.Integer("status", wire::kRequired);
  row.allowed = fields.Boolean("allowed", wire::kRequired);
  row.reason = fields.String("reason", wire::kRequired);
  row.count = fields.Integer("count", wire::kRequired);
  return row;
}

template <typename Element>
std::vector<Element> ReadObjects(FieldReader& fields, std::string_view key, Problem& problem,
                                 Element (*element)(const Json&, const std::string&, Problem&)) {
  std::vector<Element> out;
  const Json* array = fields.Array(key, wire::kOptional);
  if (array == nullptr) return out;
  for (size_t i = 0; i < array->size() && !problem; ++i) {
    out.push_back(element((*array)[i], wire::IndexPath(fields.PathOf(key), i), problem));
  }
  return out;
}

Expected<Result> ReadResult(std::string_view body) {
  Problem problem;
  auto lost = [](const std::string& message) {
    return Failure(ErrorCode::kDataLoss, "The answer is not a well-formed result: " + message);
  };
  std::optional<Json> root = wire::ParseJsonBody(body, problem);
  if (!root) return lost(*problem.message);
  if (!root->is_object())
    return lost("the body is " + std::string(wire::DescribeType(*root)) + ".");

  Result result;
  FieldReader fields(*root, "", problem, /*null_is_absent=*/false);
  result.provider = fields.String("provider", wire::kRequired);
  result.isolation = ReadTier(fields, "isolation", problem);
  result.environment = fields.String("environment", wire::kRequired);
  result.duration_ms = fields.Integer("duration_ms", wire::kRequired);
  std::string kind = fields.String("kind", wire::kRequired);
  if (!problem) {
    if (auto parsed = ParsePayloadKind(kind)) {
      result.kind = *parsed;
    } else {
      problem.Set("kind \"" + kind + "\" is not a payload kind.");
    }
  }
  result.exit_code = fields.Integer("exit_code", wire::kRequired);
  result.timed_out = fields.Boolean("timed_out", wire::kRequired);
  result.stdout_bytes = fields.Bytes("stdout", wire::kRequired);
  result.stderr_bytes = fields.Bytes("stderr", wire::kRequired);
  result.stdout_truncated = fields.Boolean("stdout_truncated", wire::kRequired);
  result.stderr_truncated = fields.Boolean("stderr_truncated", wire::kRequired);
  if (fields.Find("outcome") != nullptr) {
    std::string outcome = fields.String("outcome", wire::kRequired);
    if (!problem) {
      result.outcome = ParseProjectOutcome(outcome);
      if (!result.outcome) problem.Set("outcome \"" + outcome + "\" is not a project outcome.");
    }
  }
  result.steps = ReadObjects<StepResult>(fields, "steps", problem, &ReadStep);
  result.artifacts = ReadObjects<Artifact>(fields, "artifacts", problem, &ReadArtifact);
  // A cell's four fields come together (value only when there is one).
  if (fields.Find("interpreter_started") != nullptr) {
    CellResult cell;
    if (fields.Find("value") != nullptr) cell.value = fields.Bytes("value", wire::kRequired);
    cell.value_truncated = fields.Boolean("value_truncated", wire::kRequired);
    cell.interpreter_started = fields.Boolean("interpreter_started", wire::kRequired);
    cell.state_kept = fields.Boolean("state_kept", wire::kRequired);
    result.cell = std::move(cell);
  }
  if (const Json* broker = fields.Object("broker", wire::kOptional)) {
    FieldReader broker_fields(*broker, "broker", problem, /*null_is_absent=*/false);
    BrokerSummary summary;
    summary.profile = broker_fields.String("profile", wire::kRequired);
    summary.calls = broker_fields.Integer("calls", wire::kRequired);
    summary.denied = broker_fields.Integer("denied", wire::kRequired);
    summary.routes = ReadObjects<BrokerRoute>(broker_fields, "routes", problem, &ReadBrokerRoute);
    if (!problem && summary.routes.size() > kMaxBrokerRoutes) {
      problem.Set("broker.routes has more than " + std::to_string(kMaxBrokerRoutes) + " rows.");
    }
    if (broker_fields.Find("routes_dropped") != nullptr) {
      summary.routes_dropped = broker_fields.Integer("routes_dropped", wire::kRequired);
    }
    result.broker = std::move(summary);
  }
  result.advice = ReadObjects<Advice>(fields, "advice", problem, &ReadAdvice);
  result.displays = ReadObjects<Display>(fields, "displays", problem, &ReadDisplay);
  if (fields.Find("displays_truncated") != nullptr) {
    result.displays_truncated = fields.Boolean("displays_truncated", wire::kRequired);
  }
  if (const Json* record = fields.Object("record", wire::kRequired)) {
    result.record = ReadRecord(*record, problem);
  }
  if (problem) return lost(*problem.message);
  return result;
}

}  // namespace

std::string ResultToJson(const Result& result) {
  OrderedJson out = OrderedJson::object();
  out["provider"] = result.provider;
  out["isolation"] = TierName(result.isolation);
  out["environment"] = result.environment;
  out["duration_ms"] = result.duration_ms;
  out["kind"] = PayloadKindName(result.kind);
  out["exit_code"] = result.exit_code;
  out["timed_out"] = result.timed_out;
  out["stdout"] = wire::WriteBytes(result.stdout_bytes);
  out["stderr"] = wire::WriteBytes(result.stderr_bytes);
  out["stdout_truncated"] = result.stdout_truncated;
  out["stderr_truncated"] = result.stderr_truncated;
  // A module run is a project underneath: its steps and artifacts.
  bool project = result.kind == PayloadKind::kProject || result.kind == PayloadKind::kModule;
  if (result.outcome) out["outcome"] = ProjectOutcomeName(*result.outcome);
  if (project || !result.steps.empty()) {
    OrderedJson steps = OrderedJson::array();
    for (const StepResult& step : result.steps) steps.push_back(WriteStep(step));
    out["steps"] = std::move(steps);
  }
  if (project || !result.artifacts.empty()) {
    OrderedJson artifacts = OrderedJson::array();
    for (const Artifact& artifact : result.artifacts) {
      OrderedJson entry = OrderedJson::object();
      entry["path"] = artifact.path;
      entry["content"] = wire::WriteBytes(artifact.content);
      entry["truncated"] = artifact.truncated;
      artifacts.push_back(std::move(entry));
    }
    out["artifacts"] = std::move(artifacts);
  }
  if (result.cell) {
    if (result.cell->value) out["value"] = wire::WriteBytes(*result.cell->value);
    out["value_truncated"] = result.cell->value_truncated;
    out["interpreter_started"] = result.cell->interpreter_started;
    out["state_kept"] = result.cell->state_kept;
  }
  if (result.broker) {
    OrderedJson broker = OrderedJson::object();
    broker["profile"] = result.broker->profile;
    broker["calls"] = result.broker->calls;
    broker["denied"] = result.broker->denied;
    OrderedJson routes = OrderedJson::array();
    for (const BrokerRoute& row : result.broker->routes) {
      OrderedJson entry = OrderedJson::object();
      entry["method"] = row.method;
      entry["route"] = row.route;
      entry["status"] = row.status;
      entry["allowed"] = row.allowed;
      entry["reason"] = row.reason;
      entry["count"] = row.count;
      routes.push_back(std::move(entry));
    }
    broker["routes"] = std::move(routes);
    broker["routes_dropped"] = result.broker->routes_dropped;
    out["broker"] = std::move(broker);
  }
  if (!result.advice.empty()) {
    OrderedJson advice = OrderedJson::array();
    for (const Advice& finding : result.advice) {
      OrderedJson entry = OrderedJson::object();
      entry["pattern"] = finding.pattern;
      entry["route"] = finding.route;
      entry["message"] = finding.message;
      entry["extra_calls"] = finding.extra_calls;
      entry["added_latency_ms"] = wire::WriteFloat(finding.added_latency_ms);
      entry["bytes"] = finding.bytes;
      advice.push_back(std::move(entry));
    }
    out["advice"] = std::move(advice);
  }
  if (!result.displays.empty()) {
    OrderedJson displays = OrderedJson::array();
    for (const Display& display : result.displays) {
      OrderedJson entry = OrderedJson::object();
      entry["mime"] = display.mime;
      entry["data"] = wire::WriteBytes(display.data);
      if (display.width > 0) entry["width"] = display.width;
      if (display.height > 0) entry["height"] = display.height;
      displays.push_back(std::move(entry));
    }
    out["displays"] = std::move(displays);
  }
  if (result.displays_truncated) out["displays_truncated"] = true;
  out["record"] = WriteRecord(result.record);
  return wire::Dump(out);
}

Expected<Result> ParseResultJson(std::string_view body) {
  try {
    return ReadResult(body);
  } catch (const std::exception& error) {
    // Not expected (every access is type-checked); an unreadable answer is
    // data loss, never "nothing ran".
    return Failure(ErrorCode::kDataLoss,
                   std::string("The answer could not be read: ") + error.what() + ".");
  }
}

}  // namespace plimsoll
