#include "broker/grants_problems.h"

#include <algorithm>
#include <set>
#include <utility>

namespace plimsoll::broker {
namespace {

// yaml-cpp tags a plain (unquoted) scalar "?" and a quoted one "!".
bool IsPlainScalar(const YAML::Node& node) {
  return node.IsScalar() && node.Tag() == "?";
}

std::string_view KindOf(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (node.IsNull()) return "empty";
  return "a scalar";
}

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string KnownList(const std::vector<std::string_view>& fields) {
  std::string list;
  for (std::string_view field : fields) {
    if (!list.empty()) list += ", ";
    list += field;
  }
  return list;
}

}  // namespace

int LineOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line >= 0 ? mark.line + 1 : 1;
}

void GrantsProblems::Add(const YAML::Node& at, std::string_view where, std::string_view what) {
  AddAtLine(LineOf(at), where, what);
}

void GrantsProblems::AddAtLine(int line, std::string_view where, std::string_view what) {
  std::string text(where);
  text += ": ";
  text += what;
  problems_.push_back({line, std::move(text)});
}

Error GrantsProblems::ToError() const {
  std::vector<Problem> sorted = problems_;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Problem& a, const Problem& b) { return a.line < b.line; });
  std::string message = "The grants file " + source_ + " has " + std::to_string(sorted.size()) +
                        (sorted.size() == 1 ? " problem:" : " problems:");
  for (const Problem& problem : sorted) {
    message += "\n" + source_ + ":" + std::to_string(problem.line) + ": " + problem.text;
  }
  return Failure(ErrorCode::kInvalidArgument, std::move(message));
}

std::optional<std::string> GrantsProblems::String(const YAML::Node& node, std::string_view where) {
  if (!node.IsScalar() || (IsPlainScalar(node) && node.IsNull())) {
    Add(node, where, "must be a string, not " + std::string(KindOf(node)) + ".");
    return std::nullopt;
  }
  if (node.Scalar().empty()) {
    Add(node, where, "is empty.");
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<int64_t> GrantsProblems::Integer(const YAML::Node& node, std::string_view where,
                                               int64_t min, int64_t max) {
  std::string range = "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
  if (!IsPlainScalar(node) || node.IsNull()) {
    std::string_view kind = node.IsScalar() && !node.IsNull() ? "a quoted string" : KindOf(node);
    Add(node, where, "must be " + range + ", not " + std::string(kind) + ".");
    return std::nullopt;
  }
  const std::string& text = node.Scalar();
  bool digits = !text.empty() && text.size() <= 12 &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits) {
    Add(node, where, "must be " + range + "; \"" + text.substr(0, 40) + "\" is not.");
    return std::nullopt;
  }
  int64_t value = std::stoll(text);
  if (value < min || value > max) {
    Add(node, where, "must be " + range + "; " + text + " is out of range.");
    return std::nullopt;
  }
  return value;
}

std::optional<bool> GrantsProblems::Boolean(const YAML::Node& node, std::string_view where) {
  if (IsPlainScalar(node) && node.Scalar() == "true") return true;
  if (IsPlainScalar(node) && node.Scalar() == "false") return false;
  Add(node, where, "must be true or false (unquoted).");
  return std::nullopt;
}

std::optional<std::vector<std::string>> GrantsProblems::StringList(const YAML::Node& node,
                                                                   std::string_view where) {
  if (!node.IsSequence()) {
    Add(node, where, "must be a list, not " + std::string(KindOf(node)) + ".");
    return std::nullopt;
  }
  std::vector<std::string> values;
  std::size_t index = 0;
  for (const YAML::Node& entry : node) {
    std::string entry_where = std::string(where) + "[" + std::to_string(index++) + "]";
    if (auto value = String(entry, entry_where)) values.push_back(std::move(*value));
  }
  return values;
}

std::optional<std::vector<GrantsProblems::Entry>> GrantsProblems::Mapping(const YAML::Node& node,
                                                                          std::string_view where) {
  if (!node.IsMap()) {
    Add(node, where, "must be a mapping, not " + std::string(KindOf(node)) + ".");
    return std::nullopt;
  }
  std::vector<Entry> entries;
  std::set<std::string> seen;
  // Copies, not references: yaml-cpp's iterator hands out a temporary proxy.
  for (const auto& pair : node) {
    YAML::Node key = pair.first;
    YAML::Node value = pair.second;
    if (!key.IsScalar() || key.Scalar().empty()) {
      Add(key, where, "has a key that is not a non-empty string.");
      continue;
    }
    std::string prefix = where.empty() ? "" : std::string(where) + ".";
    if (!seen.insert(key.Scalar()).second) {
      Add(key, prefix + key.Scalar(), "appears more than once.");
      continue;
    }
    entries.push_back({key.Scalar(), key, value});
  }
  return entries;
}

std::string GrantsProblems::DidYouMean(std::string_view key,
                                       const std::vector<std::string_view>& known) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (std::string_view candidate : known) {
    std::size_t distance = EditDistance(key, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  if (best.empty()) return "";
  return "; did you mean " + std::string(best) + "?";
}

std::string GrantsProblems::UnknownField(std::string_view key,
                                         const std::vector<std::string_view>& known,
                                         std::string_view of_what) {
  return "is not a field of " + std::string(of_what) + DidYouMean(key, known) +
         " (known: " + KnownList(known) + ").";
}

}  // namespace plimsoll::broker
