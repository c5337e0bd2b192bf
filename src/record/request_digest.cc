// RequestDigest: the request as the client sent it (SPEC §5). The field order
// below is normative; docs/run-records.md repeats it for other languages.
//
// Covered: protocol, minimum_isolation, timeout_ms, grant_profile, image
// (only when named: requests without one keep the digest they always had),
// and every payload (kind plus each field). Not covered, by SPEC §5's list: trace_id
// (observability only, and dropped by the daemon when malformed) and
// environment (checked separately by CheckExchange).
#include "plimsoll/record.h"
#include "plimsoll/request.h"
#include "record/digest_builder.h"

namespace plimsoll {
namespace {

void AddProject(record::DigestBuilder& digest, const ProjectPayload& project) {
  digest.Count("project.files", project.files.size());
  for (const ProjectFile& file : project.files) {
    digest.Bytes("project.file.path", file.path);
    digest.Bytes("project.file.content", file.content);
  }
  digest.Count("project.steps", project.steps.size());
  for (const auto& argv : project.steps) {
    digest.Count("project.step.argv", argv.size());
    for (const std::string& argument : argv) digest.Bytes("project.step.arg", argument);
  }
  digest.Count("project.artifacts", project.artifacts.size());
  for (const std::string& path : project.artifacts) digest.Bytes("project.artifact", path);
}

}  // namespace

std::string RequestDigest(const Request& request) {
  record::DigestBuilder digest(kRequestDomain);
  digest.Integer("protocol", request.protocol);
  digest.Bytes("minimum_isolation", request.minimum_isolation);
  digest.Integer("timeout_ms", request.timeout_ms);
  digest.Bytes("grant_profile", request.grant_profile);
  // The image selects what runs, so a rewritten name must not pass: covered,
  // as a field present only when the request names one.
  if (!request.image.empty()) digest.Bytes("image", request.image);
  // A valid request has exactly one payload; the count keeps the encoding
  // total (and unambiguous) for requests that carry none or several.
  digest.Count("payloads", static_cast<size_t>(request.PayloadCount()));
  if (request.javascript) {
    digest.Bytes("kind", PayloadKindName(PayloadKind::kJavascript));
    digest.Bytes("javascript.code", request.javascript->code);
  }
  if (request.python) {
    digest.Bytes("kind", PayloadKindName(PayloadKind::kPython));
    digest.Bytes("python.code", request.python->code);
  }
  if (request.project) {
    digest.Bytes("kind", PayloadKindName(PayloadKind::kProject));
    AddProject(digest, *request.project);
  }
  if (request.cell) {
    digest.Bytes("kind", PayloadKindName(PayloadKind::kCell));
    digest.Bytes("cell.language", request.cell->language);
    digest.Bytes("cell.code", request.cell->code);
  }
  if (request.module) {
    digest.Bytes("kind", PayloadKindName(PayloadKind::kModule));
    digest.Bytes("module.model", request.module->model);
    digest.Count("module.rows", request.module->rows.size());
    for (const std::vector<double>& row : request.module->rows) {
      digest.Count("module.row", row.size());
      for (double value : row) digest.Float("module.value", value);
    }
    digest.Float("module.end_time", request.module->end_time);
    digest.Float("module.step", request.module->step);
  }
  return std::move(digest).Finish();
}

}  // namespace plimsoll
