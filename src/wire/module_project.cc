#include "wire/module_project.h"

#include "wire/json_writer.h"

namespace plimsoll::wire {

ProjectPayload ModuleProject(const ModulePayload& module) {
  OrderedJson spec = OrderedJson::object();
  spec["model"] = module.model;
  spec["rows"] = module.rows;
  spec["end_time"] = module.end_time;
  spec["step"] = module.step;
  return ProjectPayload{{{kModuleSpecFile, Dump(spec)}},
                        {{"plimsoll-model", kModuleSpecFile, kModuleRowsArtifact}},
                        {kModuleRowsArtifact}};
}

}  // namespace plimsoll::wire
