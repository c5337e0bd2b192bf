// Reads the body of `GET /v1/describe` (api/openapi.yaml `Description`,
// written by plimsoll::DescriptionToJson) into a DaemonDescription.
//
// Read like results (wire.h): strict for the fields this build knows (types,
// required fields, duplicate keys, known tier names), ignoring fields it does
// not know; a payload kind this build does not know is skipped, so a newer
// daemon can announce more. Never throws.
//
// Usage:
//   auto description = plimsoll::client::ParseDescriptionJson(answer.body);
//   if (!description.ok()) return description.error();  // kDataLoss, no mark
#ifndef PLIMSOLL_CLIENT_DESCRIPTION_JSON_H_
#define PLIMSOLL_CLIENT_DESCRIPTION_JSON_H_

#include <string_view>

#include "plimsoll/client.h"

namespace plimsoll::client {

Expected<DaemonDescription> ParseDescriptionJson(std::string_view body);

}  // namespace plimsoll::client

#endif  // PLIMSOLL_CLIENT_DESCRIPTION_JSON_H_
