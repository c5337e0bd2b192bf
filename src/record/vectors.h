// The shared record test vectors (testdata/records/vectors.json).
//
// The inputs are built here as C++ values and written in their wire form
// (wire.h), so a client in any language recomputes each digest from exactly
// what it would send and receive. `plimsoll-record-vectors` writes the file;
// record_test checks the committed file against a fresh generation and
// recomputes every digest from the file's inputs.
#ifndef PLIMSOLL_RECORD_VECTORS_H_
#define PLIMSOLL_RECORD_VECTORS_H_

#include <nlohmann/json.hpp>
#include <string>

#include "plimsoll/error.h"
#include "plimsoll/limits.h"

namespace plimsoll::record {

// The whole vectors file, pretty-printed, ending in a newline.
std::string GenerateVectorsJson();

// Limits as a JSON object keyed by field name (the policy vectors' input).
nlohmann::ordered_json LimitsToJson(const Limits& limits);
Expected<Limits> LimitsFromJson(const nlohmann::json& object);

}  // namespace plimsoll::record

#endif  // PLIMSOLL_RECORD_VECTORS_H_
