#include "wire/json_reader.h"

#include <limits>
#include <set>
#include <vector>

#include "wire/base64.h"

namespace plimsoll::wire {
namespace {

// Thrown from the parser callback to stop at the first structural problem;
// caught in ParseJsonBody and never leaves this file.
struct StructureProblem {
  std::string message;
};

std::string Quote(std::string_view text) {
  // Keys in messages are shown JSON-escaped, so control characters and
  // invalid bytes cannot reach a log line raw.
  return Json(std::string(text)).dump(-1, ' ', true, Json::error_handler_t::replace);
}

std::string StripExceptionPrefix(std::string what) {
  // "[json.exception.parse_error.101] parse error at ..." -> "parse error at ..."
  if (!what.empty() && what.front() == '[') {
    size_t end = what.find("] ");
    if (end != std::string::npos) what.erase(0, end + 2);
  }
  return what;
}

}  // namespace

Status CheckProtocol(const Json& root) {
  const std::string protocol = std::to_string(kProtocol);
  auto it = root.find("protocol");
  if (it == root.end()) {
    return Refusal(NotDispatched::kProtocol,
                   "The request has no \"protocol\" field; this daemon speaks protocol " +
                       protocol + ".");
  }
  if (!it->is_number_integer()) {
    return Refusal(NotDispatched::kProtocol, "\"protocol\" must be the integer " + protocol +
                                                 ", not " + std::string(DescribeType(*it)) + ".");
  }
  // Compared as JSON numbers, so 2^64-1 is not mistaken for -1.
  if (*it != Json(kProtocol)) {
    return Refusal(NotDispatched::kProtocol, "This daemon speaks protocol " + protocol +
                                                 "; the request says " + it->dump() + ".");
  }
  return Status::Ok();
}

std::optional<Json> ParseJsonBody(std::string_view body, Problem& problem) {
  std::vector<std::set<std::string>> open_objects;
  std::vector<std::string> paths;  // key paths, for the duplicate-key message
  auto callback = [&](int depth, Json::parse_event_t event, Json& parsed) -> bool {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start:
        if (depth >= kMaxJsonDepth) {
          throw StructureProblem{"The body nests deeper than " + std::to_string(kMaxJsonDepth) +
                                 " levels."};
        }
        if (event == Json::parse_event_t::object_start) open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (!open_objects.empty() && parsed.is_string()) {
          const auto& key = parsed.get_ref<const std::string&>();
          if (!open_objects.back().insert(key).second) {
            throw StructureProblem{"The body repeats the key " + Quote(key) +
                                   " in one object; each key may appear once."};
          }
        }
        break;
      default:
        break;
    }
    return true;
  };
  try {
    return Json::parse(body.begin(), body.end(), callback, /*allow_exceptions=*/true,
                       /*ignore_comments=*/false);
  } catch (const StructureProblem& structure) {
    problem.Set(structure.message);
  } catch (const Json::exception& error) {
    problem.Set("The body is not valid JSON: " + StripExceptionPrefix(error.what()) + ".");
  }
  return std::nullopt;
}

std::string JoinPath(std::string_view base, std::string_view key) {
  if (base.empty()) return std::string(key);
  std::string out(base);
  out += '.';
  out += key;
  return out;
}

std::string IndexPath(std::string_view base, size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

std::string_view DescribeType(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a non-integer number";
    default:
      return "an unexpected value";
  }
}

std::string ReadString(const Json& value, std::string_view path, Problem& problem) {
  if (!value.is_string()) {
    problem.Set(std::string(path) + " must be a string, not " + std::string(DescribeType(value)) +
                ".");
    return {};
  }
  return value.get_ref<const std::string&>();
}

std::string ReadBytes(const Json& value, std::string_view path, Problem& problem) {
  if (value.is_string()) return value.get_ref<const std::string&>();
  if (value.is_object() && value.size() == 1 && value.contains("base64")) {
    const Json& text = value["base64"];
    if (!text.is_string()) {
      problem.Set(std::string(path) + ".base64 must be a string.");
      return {};
    }
    auto decoded = DecodeBase64(text.get_ref<const std::string&>());
    if (!decoded) {
      problem.Set(std::string(path) +
                  ".base64 is not canonical padded base64 (RFC 4648, standard alphabet).");
      return {};
    }
    return std::move(*decoded);
  }
  problem.Set(std::string(path) + R"( must be a string or {"base64": "..."}, not )" +
              std::string(DescribeType(value)) + ".");
  return {};
}

int64_t ReadInteger(const Json& value, std::string_view path, Problem& problem) {
  if (value.is_number_unsigned()) {
    auto number = value.get<uint64_t>();
    if (number > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      problem.Set(std::string(path) + " is out of the 64-bit integer range.");
      return 0;
    }
    return static_cast<int64_t>(number);
  }
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    // A JSON number too large for 64 bits arrives here as a float too.
    problem.Set(std::string(path) + " must be an integer (without a fraction or exponent) " +
                "in the 64-bit range.");
    return 0;
  }
  problem.Set(std::string(path) + " must be an integer, not " + std::string(DescribeType(value)) +
              ".");
  return 0;
}

double ReadFloat(const Json& value, std::string_view path, Problem& problem) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  problem.Set(std::string(path) + R"( must be a number or one of "NaN", "Infinity", "-Infinity".)");
  return 0;
}

FieldReader::FieldReader(const Json& object, std::string path, Problem& problem,
                         bool null_is_absent)
    : object_(object), path_(std::move(path)), problem_(problem), null_is_absent_(null_is_absent) {}

const Json* FieldReader::Find(std::string_view key) const {
  auto it = object_.find(key);
  if (it == object_.end()) return nullptr;
  if (null_is_absent_ && it->is_null()) return nullptr;
  return &*it;
}

const Json* FieldReader::Member(std::string_view key, Presence presence) {
  const Json* member = Find(key);
  if (member == nullptr && presence == kRequired) problem_.Set(PathOf(key) + " is required.");
  return member;
}

std::string FieldReader::String(std::string_view key, Presence presence) {
  const Json* member = Member(key, presence);
  return member ? ReadString(*member, PathOf(key), problem_) : std::string();
}

int64_t FieldReader::Integer(std::string_view key, Presence presence) {
  const Json* member = Member(key, presence);
  return member ? ReadInteger(*member, PathOf(key), problem_) : 0;
}

bool FieldReader::Boolean(std::string_view key, Presence presence) {
  const Json* member = Member(key, presence);
  if (member == nullptr) return false;
  if (!member->is_boolean()) {
    problem_.Set(PathOf(key) + " must be true or false, not " + std::string(DescribeType(*member)) +
                 ".");
    return false;
  }
  return member->get<bool>();
}

double FieldReader::Float(std::string_view key, Presence presence) {
  const Json* member = Member(key, presence);
  return member ? ReadFloat(*member, PathOf(key), problem_) : 0.0;
}

std::string FieldReader::Bytes(std::string_view key, Presence presence) {
  const Json* member = Member(key, presence);
  return member ? ReadBytes(*member, PathOf(key), problem_) : std::string();
}

const Json* FieldReader::Object(std::string_view key, Presence presence) {
  const Json* member = Member(key, presence);
  if (member != nullptr && !member->is_object()) {
    problem_.Set(PathOf(key) + " must be an object, not " + std::string(DescribeType(*member)) +
                 ".");
    return nullptr;
  }
  return member;
}

const Json* FieldReader::Array(std::string_view key, Presence presence) {
  const Json* member = Member(key, presence);
  if (member != nullptr && !member->is_array()) {
    problem_.Set(PathOf(key) + " must be an array, not " + std::string(DescribeType(*member)) +
                 ".");
    return nullptr;
  }
  return member;
}

void FieldReader::RejectUnknown(std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : object_.items()) {
    bool found = false;
    for (std::string_view name : known) found = found || name == key;
    if (!found) {
      problem_.Set("Unknown field " + Quote(PathOf(key)) + "; this build does not know it.");
      return;
    }
  }
}

}  // namespace plimsoll::wire
