#include "cli/token_source.h"

#include <fstream>
#include <iterator>
#include <string_view>

namespace plimsoll::cli {
namespace {

// A token is a few dozen bytes; a huge file is not a token file.
constexpr size_t kMaxTokenFileBytes = 4096;

std::string Trimmed(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return "";
  size_t last = text.find_last_not_of(kSpace);
  return std::string(text.substr(first, last - first + 1));
}

}  // namespace

Expected<std::string> ReadBearerToken(const std::string& token_file,
                                      const char* environment_value) {
  if (token_file.empty()) {
    return environment_value == nullptr ? std::string() : Trimmed(environment_value);
  }
  std::ifstream in(token_file, std::ios::binary);
  if (!in)
    return Refusal(NotDispatched::kRequest, "Cannot read the token file " + token_file + ".");
  std::string text;
  text.resize(kMaxTokenFileBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxTokenFileBytes) {
    return Refusal(NotDispatched::kRequest, "The token file " + token_file + " is larger than " +
                                                std::to_string(kMaxTokenFileBytes) +
                                                " bytes; it does not hold one token.");
  }
  std::string token = Trimmed(text);
  if (token.empty()) {
    return Refusal(NotDispatched::kRequest, "The token file " + token_file + " is empty.");
  }
  return token;
}

}  // namespace plimsoll::cli
