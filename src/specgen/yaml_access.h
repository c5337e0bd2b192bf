// Reading an OpenAPI document's yaml-cpp nodes without surprises: lookups
// that never insert, never throw and never hand back yaml-cpp's "zombie"
// nodes (which throw on use), and local `$ref`s followed with a bound.
//
// Usage:
//   const YAML::Node parameter = Resolve(root, Field(operation, "parameters")[0]);
//   std::string name = ScalarOr(Field(parameter, "name"));
//
// Nodes are moved with reset(), never assigned: assigning one yaml-cpp Node
// to another rewrites the document.
#ifndef PLIMSOLL_SPECGEN_YAML_ACCESS_H_
#define PLIMSOLL_SPECGEN_YAML_ACCESS_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

namespace plimsoll::specgen {

// The value of `key` in a mapping; an undefined node (false in a condition)
// for a missing key or anything but a mapping.
YAML::Node Field(const YAML::Node& node, const std::string& key);

// The scalar's text, else `fallback`.
std::string ScalarOr(const YAML::Node& node, const std::string& fallback = "");

// A YAML boolean scalar that says true (true, yes, on, ...).
bool IsTrue(const YAML::Node& node);

// `node` with its local `$ref`s followed ("#/components/parameters/limit",
// JSON pointer escapes ~0 and ~1), at most 16 in a row so that a cycle ends.
// Undefined when a reference is external or leads nowhere.
YAML::Node Resolve(const YAML::Node& root, const YAML::Node& node);

}  // namespace plimsoll::specgen

#endif  // PLIMSOLL_SPECGEN_YAML_ACCESS_H_
