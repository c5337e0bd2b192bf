#include "specgen/yaml_access.h"

namespace plimsoll::specgen {
namespace {

YAML::Node Undefined() {
  return YAML::Node(YAML::NodeType::Undefined);
}

// The element at a decimal index of a sequence; undefined otherwise.
YAML::Node Element(const YAML::Node& node, const std::string& index) {
  if (!node || !node.IsSequence() || index.empty() || index.size() > 9 ||
      index.find_first_not_of("0123456789") != std::string::npos) {
    return Undefined();
  }
  size_t at = std::stoul(index);
  if (at >= node.size()) return Undefined();
  const YAML::Node element = node[at];
  return element ? element : Undefined();
}

// "a~1b~0c" -> "a/b~c".
std::string Unescape(std::string_view token) {
  std::string text;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      text += token[i + 1] == '1' ? '/' : '~';
      ++i;
    } else {
      text += token[i];
    }
  }
  return text;
}

YAML::Node FollowPointer(const YAML::Node& root, std::string_view reference) {
  if (!reference.starts_with("#/")) return Undefined();
  YAML::Node node = root;
  std::string_view rest = reference.substr(2);
  while (node) {
    size_t slash = rest.find('/');
    std::string token = Unescape(rest.substr(0, slash));
    const YAML::Node current = node;
    node.reset(current.IsMap() ? Field(current, token) : Element(current, token));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return node;
}

}  // namespace

YAML::Node Field(const YAML::Node& node, const std::string& key) {
  if (!node || !node.IsMap()) return Undefined();
  const YAML::Node value = node[key];  // const: a lookup, never an insertion
  return value ? value : Undefined();  // a missing key is a "zombie" that throws on use
}

std::string ScalarOr(const YAML::Node& node, const std::string& fallback) {
  return node && node.IsScalar() ? node.Scalar() : fallback;
}

bool IsTrue(const YAML::Node& node) {
  bool value = false;
  return node && node.IsScalar() && YAML::convert<bool>::decode(node, value) && value;
}

YAML::Node Resolve(const YAML::Node& root, const YAML::Node& node) {
  YAML::Node current = node;
  for (int hops = 0; hops < 16; ++hops) {
    const YAML::Node reference = Field(current, "$ref");
    if (!reference) return current;
    current.reset(FollowPointer(root, ScalarOr(reference)));
  }
  return Undefined();
}

}  // namespace plimsoll::specgen
