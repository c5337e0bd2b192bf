// One HTTP answer as the client received it: status, headers, body. Plain
// data, so the checks in answer_check.h can be tested without sockets.
//
// Usage:
//   HttpAnswer answer{.status = 200, .headers = {{"plimsoll-request-id", id}}, .body = json};
//   std::vector<std::string> ids = answer.Values("plimsoll-request-id");
#ifndef PLIMSOLL_CLIENT_HTTP_ANSWER_H_
#define PLIMSOLL_CLIENT_HTTP_ANSWER_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plimsoll::client {

struct HttpAnswer {
  unsigned status = 0;
  // In arrival order; names lowercased.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // Every value of a header (`lowercase_name` must be lowercase).
  std::vector<std::string> Values(std::string_view lowercase_name) const {
    std::vector<std::string> values;
    for (const auto& [name, value] : headers) {
      if (name == lowercase_name) values.push_back(value);
    }
    return values;
  }
};

}  // namespace plimsoll::client

#endif  // PLIMSOLL_CLIENT_HTTP_ANSWER_H_
