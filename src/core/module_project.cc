#include "core/module_project.h"

#include <nlohmann/json.hpp>

namespace plimsoll {

ProjectPayload ModuleProject(const ModulePayload& module) {
  // Keys in this order, compact, as the wire writes JSON (wire::Dump).
  nlohmann::ordered_json spec = nlohmann::ordered_json::object();
  spec["model"] = module.model;
  spec["rows"] = module.rows;
  spec["end_time"] = module.end_time;
  spec["step"] = module.step;
  std::string text =
      spec.dump(-1, ' ', /*ensure_ascii=*/false, nlohmann::ordered_json::error_handler_t::replace);
  return ProjectPayload{{{kModuleSpecFile, std::move(text)}},
                        {{"plimsoll-model", kModuleSpecFile, kModuleRowsArtifact}},
                        {kModuleRowsArtifact}};
}

}  // namespace plimsoll
