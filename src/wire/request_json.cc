// ParseRequestJson / RequestToJson: the run request of SPEC §4.
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

// Reads an array member whose elements are read by `element`.
template <typename Element>
std::vector<Element> ReadList(FieldReader& fields, std::string_view key, Problem& problem,
                              Element (*element)(const Json&, std::string_view, Problem&)) {
  std::vector<Element> out;
  const Json* array = fields.Array(key, wire::kOptional);
  if (array == nullptr) return out;
  std::string path = fields.PathOf(key);
  out.reserve(array->size());
  for (size_t i = 0; i < array->size() && !problem; ++i) {
    out.push_back(element((*array)[i], wire::IndexPath(path, i), problem));
  }
  return out;
}

ProjectFile ReadFile(const Json& value, std::string_view path, Problem& problem) {
  ProjectFile file;
  if (!value.is_object()) {
    problem.Set(std::string(path) + R"( must be an object {"path": ..., "content": ...}.)");
    return file;
  }
  FieldReader fields(value, std::string(path), problem, /*null_is_absent=*/true);
  fields.RejectUnknown({"path", "content"});
  file.path = fields.String("path", wire::kRequired);
  file.content = fields.Bytes("content", wire::kRequired);
  return file;
}

std::vector<std::string> ReadArgv(const Json& value, std::string_view path, Problem& problem) {
  std::vector<std::string> argv;
  if (!value.is_array()) {
    problem.Set(std::string(path) + R"( must be an argv array such as ["node", "main.js"].)");
    return argv;
  }
  argv.reserve(value.size());
  for (size_t i = 0; i < value.size() && !problem; ++i) {
    argv.push_back(wire::ReadString(value[i], wire::IndexPath(path, i), problem));
  }
  return argv;
}

ProjectPayload ReadProject(const Json& object, Problem& problem) {
  ProjectPayload project;
  FieldReader fields(object, "project", problem, /*null_is_absent=*/true);
  fields.RejectUnknown({"files", "steps", "artifacts"});
  project.files = ReadList<ProjectFile>(fields, "files", problem, &ReadFile);
  project.steps = ReadList<std::vector<std::string>>(fields, "steps", problem, &ReadArgv);
  project.artifacts = ReadList<std::string>(fields, "artifacts", problem, &wire::ReadString);
  return project;
}

std::vector<double> ReadRow(const Json& value, std::string_view path, Problem& problem) {
  std::vector<double> row;
  if (!value.is_array()) {
    problem.Set(std::string(path) + " must be an array of numbers (the model's parameters).");
    return row;
  }
  row.reserve(value.size());
  for (size_t i = 0; i < value.size() && !problem; ++i) {
    row.push_back(wire::ReadFloat(value[i], wire::IndexPath(path, i), problem));
  }
  return row;
}

ModulePayload ReadModule(const Json& object, Problem& problem) {
  ModulePayload module;
  FieldReader fields(object, "module", problem, /*null_is_absent=*/true);
  fields.RejectUnknown({"model", "rows", "end_time", "step"});
  module.model = fields.String("model", wire::kRequired);
  module.rows = ReadList<std::vector<double>>(fields, "rows", problem, &ReadRow);
  module.end_time = fields.Float("end_time", wire::kRequired);
  module.step = fields.Float("step", wire::kRequired);
  return module;
}

std::string ReadCode(const Json& object, std::string_view kind, Problem& problem) {
  FieldReader fields(object, std::string(kind), problem, /*null_is_absent=*/true);
  fields.RejectUnknown({"code"});
  return fields.Bytes("code", wire::kRequired);
}

Expected<Request> ReadRequest(std::string_view body) {
  Problem problem;
  std::optional<Json> root = wire::ParseJsonBody(body, problem);
  if (!root) return Refusal(NotDispatched::kRequest, *problem.message);
  if (!root->is_object()) {
    return Refusal(NotDispatched::kRequest, "The request body must be a JSON object, not " +
                                                std::string(wire::DescribeType(*root)) + ".");
  }
  PLIMSOLL_RETURN_IF_ERROR(wire::CheckProtocol(*root));

  Request request;
  request.protocol = kProtocol;
  FieldReader fields(*root, "", problem, /*null_is_absent=*/true);
  fields.RejectUnknown({"protocol", "minimum_isolation", "timeout_ms", "trace_id", "grant_profile",
                        "environment", "image", "javascript", "python", "project", "cell",
                        "module"});
  request.minimum_isolation = fields.String("minimum_isolation", wire::kOptional);
  request.timeout_ms = fields.Integer("timeout_ms", wire::kOptional);
  request.trace_id = fields.String("trace_id", wire::kOptional);
  request.grant_profile = fields.String("grant_profile", wire::kOptional);
  request.environment = fields.String("environment", wire::kOptional);
  request.image = fields.String("image", wire::kOptional);
  if (const Json* javascript = fields.Object("javascript", wire::kOptional)) {
    request.javascript = JavascriptPayload{ReadCode(*javascript, "javascript", problem)};
  }
  if (const Json* python = fields.Object("python", wire::kOptional)) {
    request.python = PythonPayload{ReadCode(*python, "python", problem)};
  }
  if (const Json* project = fields.Object("project", wire::kOptional)) {
    request.project = ReadProject(*project, problem);
  }
  if (const Json* cell = fields.Object("cell", wire::kOptional)) {
    FieldReader cell_fields(*cell, "cell", problem, /*null_is_absent=*/true);
    cell_fields.RejectUnknown({"language", "code"});
    CellPayload payload;
    payload.language = cell_fields.String("language", wire::kRequired);
    payload.code = cell_fields.Bytes("code", wire::kRequired);
    request.cell = std::move(payload);
  }
  if (const Json* module = fields.Object("module", wire::kOptional)) {
    request.module = ReadModule(*module, problem);
  }
  if (problem) return Refusal(NotDispatched::kRequest, *problem.message);
  return request;
}

}  // namespace

Expected<Request> ParseRequestJson(std::string_view body) {
  try {
    return ReadRequest(body);
  } catch (const std::bad_alloc&) {
    return Refusal(NotDispatched::kRequest, ErrorCode::kResourceExhausted,
                   "The request is too large to read.");
  } catch (const nlohmann::json::exception& error) {
    // Not expected: every access above is type-checked first. Kept so that a
    // mistake here is a refusal, never a crash of the daemon.
    return Refusal(NotDispatched::kRequest,
                   std::string("The request could not be read: ") + error.what() + ".");
  }
}

std::string RequestToJson(const Request& request) {
  OrderedJson out = OrderedJson::object();
  out["protocol"] = request.protocol;
  if (!request.minimum_isolation.empty()) out["minimum_isolation"] = request.minimum_isolation;
  if (request.timeout_ms != 0) out["timeout_ms"] = request.timeout_ms;
  if (!request.trace_id.empty()) out["trace_id"] = request.trace_id;
  if (!request.grant_profile.empty()) out["grant_profile"] = request.grant_profile;
  if (!request.environment.empty()) out["environment"] = request.environment;
  if (!request.image.empty()) out["image"] = request.image;
  if (request.javascript)
    out["javascript"] = {{"code", wire::WriteBytes(request.javascript->code)}};
  if (request.python) out["python"] = {{"code", wire::WriteBytes(request.python->code)}};
  if (request.project) {
    OrderedJson files = OrderedJson::array();
    for (const ProjectFile& file : request.project->files) {
      OrderedJson entry = OrderedJson::object();
      entry["path"] = file.path;
      entry["content"] = wire::WriteBytes(file.content);
      files.push_back(std::move(entry));
    }
    OrderedJson project = OrderedJson::object();
    project["files"] = std::move(files);
    project["steps"] = request.project->steps;
    project["artifacts"] = request.project->artifacts;
    out["project"] = std::move(project);
  }
  if (request.cell) {
    OrderedJson cell = OrderedJson::object();
    cell["language"] = request.cell->language;
    cell["code"] = wire::WriteBytes(request.cell->code);
    out["cell"] = std::move(cell);
  }
  if (request.module) {
    OrderedJson module = OrderedJson::object();
    module["model"] = request.module->model;
    module["rows"] = request.module->rows;
    module["end_time"] = request.module->end_time;
    module["step"] = request.module->step;
    out["module"] = std::move(module);
  }
  return wire::Dump(out);
}

}  // namespace plimsoll
