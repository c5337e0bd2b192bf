// ResultDigest: every result field the caller sees, except the record that
// carries the digest (SPEC §5). The field order below is normative;
// docs/run-records.md repeats it for other languages.
#include "plimsoll/record.h"
#include "plimsoll/result.h"
#include "record/digest_builder.h"

namespace plimsoll {
namespace {

void AddStep(record::DigestBuilder& digest, const StepResult& step) {
  digest.Count("step.command", step.command.size());
  for (const std::string& argument : step.command) digest.Bytes("step.command.arg", argument);
  digest.Integer("step.exit_code", step.exit_code);
  digest.Boolean("step.timed_out", step.timed_out);
  digest.Bytes("step.stdout", step.stdout_bytes);
  digest.Bytes("step.stderr", step.stderr_bytes);
  digest.Boolean("step.stdout_truncated", step.stdout_truncated);
  digest.Boolean("step.stderr_truncated", step.stderr_truncated);
  digest.Integer("step.duration_ms", step.duration_ms);
}

}  // namespace

std::string ResultDigest(const Result& result) {
  record::DigestBuilder digest(kResultDomain);
  digest.Bytes("provider", result.provider);
  digest.Bytes("isolation", TierName(result.isolation));
  digest.Bytes("environment", result.environment);
  digest.Bytes("kind", PayloadKindName(result.kind));
  digest.Integer("exit_code", result.exit_code);
  digest.Boolean("timed_out", result.timed_out);
  digest.Bytes("stdout", result.stdout_bytes);
  digest.Bytes("stderr", result.stderr_bytes);
  digest.Boolean("stdout_truncated", result.stdout_truncated);
  digest.Boolean("stderr_truncated", result.stderr_truncated);
  digest.Integer("duration_ms", result.duration_ms);
  // Optional fields contribute nothing when absent (docs/run-records.md,
  // "Absent fields").
  if (result.outcome) digest.Bytes("outcome", ProjectOutcomeName(*result.outcome));
  digest.Count("steps", result.steps.size());
  for (const StepResult& step : result.steps) AddStep(digest, step);
  digest.Count("artifacts", result.artifacts.size());
  for (const Artifact& artifact : result.artifacts) {
    digest.Bytes("artifact.path", artifact.path);
    digest.Bytes("artifact.content", artifact.content);
    digest.Boolean("artifact.truncated", artifact.truncated);
  }
  if (result.cell) {
    if (result.cell->value) digest.Bytes("cell.value", *result.cell->value);
    digest.Boolean("cell.value_truncated", result.cell->value_truncated);
    digest.Boolean("cell.interpreter_started", result.cell->interpreter_started);
    digest.Boolean("cell.state_kept", result.cell->state_kept);
  }
  if (result.broker) {
    digest.Bytes("broker.profile", result.broker->profile);
    digest.Integer("broker.calls", result.broker->calls);
    digest.Integer("broker.denied", result.broker->denied);
    digest.Count("broker.routes", result.broker->routes.size());
    for (const BrokerRoute& row : result.broker->routes) {
      digest.Bytes("broker.route.method", row.method);
      digest.Bytes("broker.route.route", row.route);
      digest.Integer("broker.route.status", row.status);
      digest.Boolean("broker.route.allowed", row.allowed);
      digest.Bytes("broker.route.reason", row.reason);
      digest.Integer("broker.route.count", row.count);
    }
    digest.Integer("broker.routes_dropped", result.broker->routes_dropped);
  }
  digest.Count("advice", result.advice.size());
  for (const Advice& advice : result.advice) {
    digest.Bytes("advice.pattern", advice.pattern);
    digest.Bytes("advice.route", advice.route);
    digest.Bytes("advice.message", advice.message);
    digest.Integer("advice.extra_calls", advice.extra_calls);
    digest.Float("advice.added_latency_ms", advice.added_latency_ms);
    digest.Integer("advice.bytes", advice.bytes);
  }
  // Rich outputs, last and only when there are any, so results without them
  // keep the digests they always had.
  if (!result.displays.empty()) {
    digest.Count("displays", result.displays.size());
    for (const Display& display : result.displays) {
      digest.Bytes("display.mime", display.mime);
      digest.Bytes("display.data", display.data);
      digest.Integer("display.width", display.width);
      digest.Integer("display.height", display.height);
    }
  }
  if (result.displays_truncated) digest.Boolean("displays_truncated", true);
  return std::move(digest).Finish();
}

}  // namespace plimsoll
