#include "broker/broker_file.h"

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

namespace plimsoll::broker {

EnvironmentReader ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

namespace {

Expected<std::string> ReadGrantsFile(const std::filesystem::path& path) {
  const std::string where = "The grants file " + path.string();
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return Failure(ErrorCode::kInvalidArgument,
                   where + (error ? " cannot be read: " + error.message() + "."
                                  : " is missing or is not a regular file."));
  }
  const auto size = std::filesystem::file_size(path, error);
  if (error) {
    return Failure(ErrorCode::kInvalidArgument,
                   where + " cannot be read: " + error.message() + ".");
  }
  if (size > static_cast<uintmax_t>(kMaxGrantsFileBytes)) {
    return Failure(ErrorCode::kInvalidArgument,
                   where + " is " + std::to_string(size) + " bytes; at most " +
                       std::to_string(kMaxGrantsFileBytes) + " (1 MiB) are read.");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return Failure(ErrorCode::kInvalidArgument, where + " cannot be read.");
  }
  return text.str();
}

}  // namespace

Expected<Broker> OpenBrokerFile(const std::filesystem::path& path,
                                const EnvironmentReader& environment,
                                std::vector<std::string>& warnings) {
  auto text = ReadGrantsFile(path);
  if (!text.ok()) return text.error();
  auto grants = ParseGrants(*text, path.string());
  if (!grants.ok()) return grants.error();
  warnings = grants->Warnings();
  auto broker = Broker::Create(std::move(*grants), environment);
  if (!broker.ok()) return broker.error().WithContext("The grants file " + path.string());
  return broker;
}

}  // namespace plimsoll::broker
