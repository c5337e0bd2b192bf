#include "cli/run_request.h"

#include <charconv>
#include <fstream>
#include <iterator>
#include <string_view>

#include "cli/argv_split.h"
#include "cli/project_loader.h"

namespace plimsoll::cli {

Expected<std::vector<std::vector<double>>> ParseModuleRows(std::string_view csv) {
  std::vector<std::vector<double>> rows;
  size_t line_number = 0;
  while (!csv.empty()) {
    const size_t end = csv.find('\n');
    std::string_view line = csv.substr(0, end);
    csv = end == std::string_view::npos ? std::string_view() : csv.substr(end + 1);
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty() && line.front() == '#') continue;
    if (rows.size() == kMaxModuleRows) {
      return Refusal(NotDispatched::kRequest,
                     "--rows holds more than " + std::to_string(kMaxModuleRows) + " rows.");
    }
    std::vector<double>& row = rows.emplace_back();
    if (line.empty()) continue;  // the model's default scenario
    while (true) {
      const size_t comma = line.find(',');
      std::string_view cell = line.substr(0, comma);
      while (!cell.empty() && (cell.front() == ' ' || cell.front() == '\t')) cell.remove_prefix(1);
      while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t')) cell.remove_suffix(1);
      double value = 0;
      const auto [at, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
      if (cell.empty() || error != std::errc() || at != cell.data() + cell.size()) {
        return Refusal(NotDispatched::kRequest, "--rows line " + std::to_string(line_number) +
                                                    ": \"" + std::string(cell) +
                                                    "\" is not a decimal number.");
      }
      row.push_back(value);
      if (comma == std::string_view::npos) break;
      line.remove_prefix(comma + 1);
    }
  }
  return rows;
}

Expected<Request> BuildRequest(const RunOptions& options, const Limits& limits) {
  Request request;
  request.minimum_isolation = options.floor;
  request.timeout_ms = options.timeout_ms;
  request.trace_id = options.trace_id;
  request.grant_profile = options.grant_profile;
  request.environment = options.environment;
  request.image = options.image;

  if (!options.module.empty()) {
    if (!options.project_dir.empty() || !options.code.empty() || !options.file.empty()) {
      return Refusal(NotDispatched::kRequest,
                     "Give --module or a project or a snippet, not several.");
    }
    if (options.rows_path.empty() || options.end_time <= 0 || options.step <= 0) {
      return Refusal(NotDispatched::kRequest,
                     "--module needs --rows FILE (CSV), --end-time SECONDS and --tick SECONDS.");
    }
    std::ifstream in(options.rows_path, std::ios::binary);
    if (!in) return Refusal(NotDispatched::kRequest, "Cannot open " + options.rows_path + ".");
    const std::string csv((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto rows = ParseModuleRows(csv);
    if (!rows.ok()) return rows.error();
    request.module =
        ModulePayload{options.module, std::move(*rows), options.end_time, options.step};
    return request;
  }
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
