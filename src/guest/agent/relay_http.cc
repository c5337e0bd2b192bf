#include "guest/agent/relay_http.h"

#include <algorithm>
#include <charconv>

#include "base/ascii.h"

namespace plimsoll::guest::agent {
namespace {

// Printable ASCII and spaces only: what may go back into a header line.
std::string HeaderSafe(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c >= 0x20 && c < 0x7f) out.push_back(c);
  }
  return out;
}

std::string_view Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Status";
  }
}

std::string Response(int status, std::string_view content_type, std::string_view body,
                     std::string_view extra_headers) {
  // A status the relay cannot put on a status line (0: the upstream gave
  // none) goes back as 502.
  if (status < 100 || status > 999) status = 502;
  std::string out =
      "HTTP/1.1 " + std::to_string(status) + " " + std::string(Reason(status)) + "\r\n";
  if (!content_type.empty()) out += "Content-Type: " + HeaderSafe(content_type) + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n";
  out += extra_headers;
  out += "\r\n";
  out += body;
  return out;
}

}  // namespace

std::optional<RelayRequestHead> ParseRelayRequestHead(std::string_view head, int* status,
                                                      std::string* error) {
  *status = 400;
  auto fail = [&](std::string message) {
    *error = std::move(message);
    return std::optional<RelayRequestHead>();
  };
  size_t line_end = head.find("\r\n");
  std::string_view line = head.substr(0, line_end);
  std::string_view rest = line_end == std::string_view::npos ? "" : head.substr(line_end + 2);
  size_t first = line.find(' ');
  size_t last = line.rfind(' ');
  if (first == std::string_view::npos || first == last) {
    return fail("The request line is not METHOD TARGET HTTP/1.1.");
  }
  std::string_view version = line.substr(last + 1);
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return fail("The request line does not end in HTTP/1.1.");
  }
  RelayRequestHead out;
  out.method = std::string(line.substr(0, first));
  out.target = std::string(line.substr(first + 1, last - first - 1));
  bool has_length = false, has_type = false;
  while (!rest.empty()) {
    size_t end = rest.find("\r\n");
    std::string_view header = rest.substr(0, end);
    rest = end == std::string_view::npos ? "" : rest.substr(end + 2);
    size_t colon = header.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return fail("A header line has no name and colon.");
    }
    std::string name = base::AsciiLower(header.substr(0, colon));
    std::string_view value = base::TrimSpaces(header.substr(colon + 1));
    if (name == "transfer-encoding") {
      *status = 411;
      return fail("The relay reads bodies with a Content-Length only, not chunked ones.");
    }
    if (name == "content-length") {
      int64_t length = -1;
      auto [end_of_number, problem] =
          std::from_chars(value.data(), value.data() + value.size(), length);
      if (has_length || problem != std::errc() || end_of_number != value.data() + value.size() ||
          length < 0) {
        return fail("Content-Length is not one whole number.");
      }
      out.content_length = length;
      has_length = true;
    } else if (name == "content-type") {
      if (has_type) return fail("Content-Type is sent twice.");
      out.content_type = std::string(value);
      has_type = true;
    }
  }
  return out;
}

HostCall FallbackCall(int64_t id) {
  return HostCall{.id = id, .method = "", .path = "", .content_type = "", .body = ""};
}

std::string FormatRelayResponse(const HostCallAnswer& answer) {
  std::string extra;
  if (!answer.refused.empty()) extra += "Plimsoll-Refused: " + HeaderSafe(answer.refused) + "\r\n";
  if (answer.truncated) extra += "Plimsoll-Truncated: true\r\n";
  return Response(answer.status, answer.content_type, answer.body, extra);
}

std::string FormatRelayError(int status, std::string_view message) {
  std::string text = HeaderSafe(message);
  std::erase_if(text, [](char c) { return c == '"' || c == '\\'; });
  std::string body = "{\"error\":\"relay\",\"message\":\"" + text + "\"}";
  return Response(status, "application/json", body, "Plimsoll-Refused: relay\r\n");
}

}  // namespace plimsoll::guest::agent
