#include "cli/run_request.h"

#include <fstream>
#include <iterator>

#include "cli/argv_split.h"
#include "cli/project_loader.h"

namespace plimsoll::cli {

Expected<Request> BuildRequest(const RunOptions& options, const Limits& limits) {
  Request request;
  request.minimum_isolation = options.floor;
  request.timeout_ms = options.timeout_ms;
  request.trace_id = options.trace_id;
  request.grant_profile = options.grant_profile;
  request.environment = options.environment;
  request.image = options.image;

  if (!options.project_dir.empty()) {
    if (!options.code.empty() || !options.file.empty()) {
      return Refusal(NotDispatched::kRequest,
                     "Give --project or a snippet (-e CODE or FILE), not both.");
    }
    auto files = LoadProjectFiles(options.project_dir, limits);
    if (!files.ok()) return files.error();
    ProjectPayload project;
    project.files = std::move(*files);
    for (const std::string& step : options.steps) {
      auto argv = SplitArgv(step);
      if (!argv.ok()) return argv.error();
      project.steps.push_back(std::move(*argv));
    }
    project.artifacts = options.artifacts;
    request.project = std::move(project);
    return request;
  }
  if (!options.steps.empty() || !options.artifacts.empty()) {
    return Refusal(NotDispatched::kRequest, "--step and --artifact need --project DIR.");
  }

  std::string code = options.code;
  if (!options.file.empty()) {
    if (!code.empty()) return Refusal(NotDispatched::kRequest, "Give -e CODE or FILE, not both.");
    std::ifstream in(options.file, std::ios::binary);
    if (!in) return Refusal(NotDispatched::kRequest, "Cannot open " + options.file + ".");
    code.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else if (code.empty()) {
    return Refusal(NotDispatched::kRequest,
                   "Nothing to run: give -e CODE, a FILE or --project DIR.");
  }
  if (options.lang == "javascript" || options.lang == "js") {
    request.javascript = JavascriptPayload{std::move(code)};
  } else if (options.lang == "python" || options.lang == "py") {
    request.python = PythonPayload{std::move(code)};
  } else {
    return Refusal(NotDispatched::kRequest,
                   "--lang must be javascript or python, not \"" + options.lang + "\".");
  }
  return request;
}

}  // namespace plimsoll::cli
