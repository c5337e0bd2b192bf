// GET /v1/describe: what this daemon runs and how strong its wall is.
#include "daemon/server/handlers.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon {

boost::asio::awaitable<http::Answer> HandleDescribe(ApiServices& services,
                                                    http::RequestContext& /*context*/) {
  // Describe() is cheap and side-effect free (provider.h), so it runs here.
  co_return http::JsonAnswer(http::HttpStatus::ok, DescriptionToJson(services.sandbox.Describe(),
                                                                     services.sandbox.evidence()));
}

}  // namespace plimsoll::daemon
