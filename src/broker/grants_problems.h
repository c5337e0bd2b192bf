// Reading a grants file's YAML nodes while collecting every problem
// (grants.cc's helper; not used elsewhere).
//
// ParseGrants must report every problem of a file at once, so nothing here
// stops at the first one: each reader returns nullopt and records a problem
// "<source>:<line>: <where>: <what>" instead. Lines come from yaml-cpp's
// marks (which it keeps for JSON too, being a YAML superset parser).
//
// Usage:
//
//   GrantsProblems problems("grants.yaml");
//   auto max_calls = problems.Integer(node, "inventory.max_calls", 1, 100000);
//   if (!problems.empty()) return problems.ToError();
//
// Not thread-safe; one per parse.
#ifndef PLIMSOLL_BROKER_GRANTS_PROBLEMS_H_
#define PLIMSOLL_BROKER_GRANTS_PROBLEMS_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::broker {

class GrantsProblems {
 public:
  explicit GrantsProblems(std::string_view source_name) : source_(source_name) {}

  // Records a problem at the line of `at` (1-based). `where` is
  // "<profile>.<field>" or a top-level key; `what` a phrase or sentence.
  void Add(const YAML::Node& at, std::string_view where, std::string_view what);
  void AddAtLine(int line, std::string_view where, std::string_view what);

  bool empty() const { return problems_.empty(); }
  // Failure(kInvalidArgument) listing every problem, sorted by line.
  Error ToError() const;

  // A non-empty string scalar (quoted or plain).
  std::optional<std::string> String(const YAML::Node& node, std::string_view where);
  // A plain decimal integer in [min, max] (a quoted "12" is a string).
  std::optional<int64_t> Integer(const YAML::Node& node, std::string_view where, int64_t min,
                                 int64_t max);
  // A plain true or false.
  std::optional<bool> Boolean(const YAML::Node& node, std::string_view where);
  // A sequence of non-empty strings; an entry that is not one is recorded
  // and skipped (as is the whole list if it is not a sequence: nullopt).
  std::optional<std::vector<std::string>> StringList(const YAML::Node& node,
                                                     std::string_view where);
  struct Entry {
    std::string key;
    YAML::Node key_node;  // for the key's line
    YAML::Node value;
  };
  // The entries of a mapping, in order; non-scalar and repeated keys are
  // recorded and skipped. nullopt if not a mapping.
  std::optional<std::vector<Entry>> Mapping(const YAML::Node& node, std::string_view where);

  // "…; did you mean base_url?" when `key` is one or two edits from one of
  // `known`, else "" .
  // "is not a field of <of_what>; did you mean …? (known: a, b, c)."
  static std::string UnknownField(std::string_view key, const std::vector<std::string_view>& known,
                                  std::string_view of_what);
  static std::string DidYouMean(std::string_view key, const std::vector<std::string_view>& known);

 private:
  struct Problem {
    int line = 0;
    std::string text;  // "<where>: <what>"
  };
  std::string source_;
  std::vector<Problem> problems_;
};

// The 1-based line of a node (1 when yaml-cpp knows none).
int LineOf(const YAML::Node& node);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_GRANTS_PROBLEMS_H_
