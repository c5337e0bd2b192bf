// The session routes (SPEC §9) answer `unimplemented` (reason unsupported:
// nothing ran) until sessions land; the routes exist so clients see the
// contract of api/openapi.yaml.
#include "daemon/http/errors_to_http.h"
#include "daemon/server/handlers.h"

namespace plimsoll::daemon {

boost::asio::awaitable<http::Answer> HandleSessionUnimplemented(ApiServices& services,
                                                                http::RequestContext& context) {
  co_return http::ErrorAnswer(
      Refusal(NotDispatched::kUnsupported, ErrorCode::kUnimplemented,
              "Sessions are not implemented by this daemon yet; use POST /v1/runs."),
      context.request_id, services.log);
}

}  // namespace plimsoll::daemon
