#include "cli/argv_split.h"

#include <nlohmann/json.hpp>

namespace plimsoll::cli {
namespace {

Error Bad(std::string message) {
  return Refusal(NotDispatched::kRequest, std::move(message));
}

Expected<std::vector<std::string>> FromJson(std::string_view text) {
  auto parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_array()) {
    return Bad("A --step that starts with '[' must be a JSON array of strings.");
  }
  std::vector<std::string> argv;
  for (const auto& element : parsed) {
    if (!element.is_string()) return Bad("Every element of a JSON --step must be a string.");
    argv.push_back(element.get<std::string>());
  }
  return argv;
}

}  // namespace

Expected<std::vector<std::string>> SplitArgv(std::string_view text) {
  size_t first = text.find_first_not_of(" \t");
  if (first != std::string_view::npos && text[first] == '[') return FromJson(text.substr(first));

  std::vector<std::string> argv;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote == '\'') {
      if (c == '\'') {
        quote = 0;
      } else {
        word += c;
      }
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 == text.size()) return Bad("A --step ends with a lone backslash.");
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) argv.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote != 0) return Bad(std::string("A --step has an unclosed ") + quote + " quote.");
  if (in_word) argv.push_back(std::move(word));
  if (argv.empty()) return Bad("A --step is empty; give the program and its arguments.");
  return argv;
}

}  // namespace plimsoll::cli
