// DSSE v1 envelopes (https://github.com/secure-systems-lab/dsse, protocol.md
// and envelope.md) signed with Ed25519 keys (attest/keys.h): the signed unit
// of a plimsoll-attest bundle line.
//
// A signature covers the pre-authentication encoding
//   PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
// (LEN = byte length in ASCII decimal, no leading zeros; SP = one space), so
// the payload type is signed along with the payload and neither can be
// re-interpreted. The JSON form is
//   {"payload": "<base64>", "payloadType": "<type>",
//    "signatures": [{"keyid": "<hex>", "sig": "<base64>"}]}
// with standard base64 (RFC 4648 §4, padded). Parsing is strict: an unknown
// or duplicated key, a missing field, a wrong type, an empty signature list or
// base64 that is not the canonical standard form is refused with one sentence
// naming the field, so each change to an envelope's text either fails to
// parse or changes the bytes a signature covers.
//
// What verifying proves: the holder of the private key signed exactly these
// payload type and payload bytes. The keyid is an unauthenticated hint that
// selects which signature to check; it proves nothing by itself. The caller
// still checks that the payload type is the one it expects.
//
// Usage:
//
//   auto envelope = plimsoll::attest::Sign(plimsoll::attest::kInTotoPayloadType,
//                                          statement_json, signing_key);
//   if (!envelope.ok()) return envelope.error();
//   auto line = plimsoll::attest::EnvelopeToJsonText(*envelope);
//   if (!line.ok()) return line.error();
//   ...
//   auto parsed = plimsoll::attest::ParseEnvelopeJsonText(line_text);
//   if (!parsed.ok()) return parsed.error();          // "The envelope's "sig" ..."
//   PLIMSOLL_RETURN_IF_ERROR(plimsoll::attest::VerifyEnvelope(*parsed, public_key));
//   if (parsed->payload_type != plimsoll::attest::kInTotoPayloadType) ...
//
// Pure functions: thread-safe.
#ifndef PLIMSOLL_ATTEST_DSSE_H_
#define PLIMSOLL_ATTEST_DSSE_H_

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "attest/keys.h"
#include "plimsoll/error.h"

namespace plimsoll::attest {

// The payload type of an in-toto Statement (what plimsoll-attest signs).
inline constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";

// One signature of an envelope: raw bytes, not base64.
struct DsseSignature {
  std::string keyid;  // lowercase hex SHA-256 of the signer's PKIX DER; "" when absent
  std::string sig;    // 64 bytes for Ed25519
  friend bool operator==(const DsseSignature&, const DsseSignature&) = default;
};

// A DSSE envelope with its payload as raw bytes.
struct Envelope {
  std::string payload_type;  // valid UTF-8 (it travels as a JSON string)
  std::string payload;
  std::vector<DsseSignature> signatures;
  friend bool operator==(const Envelope&, const Envelope&) = default;
};

// The pre-authentication encoding that signatures cover (see above).
std::string Pae(std::string_view payload_type, std::string_view payload);

// An envelope with one Ed25519 signature by `key` over Pae(payload_type,
// payload), keyid = KeyId(key.verifying_key()). Refuses (kInvalidArgument) a
// payload type that is empty or not valid UTF-8; kInternal if OpenSSL fails.
Expected<Envelope> Sign(std::string_view payload_type, std::string_view payload,
                        const SigningKey& key);

// Ok only if a signature whose keyid equals key.key_id() verifies over the
// PAE. Signatures with other keyids are ignored. Errors (kDataLoss), each
// naming the key ID: no signature has this keyid; the (last) matching
// signature has the wrong length; it does not verify (the payload type or
// payload changed after signing, or the signature did). Does not check the
// payload type: the caller does.
Status VerifyEnvelope(const Envelope& envelope, const VerifyingKey& key);

// The JSON object of an envelope (the shape above; "keyid" always present).
// Precondition: payload_type is valid UTF-8 (Sign guarantees it);
// EnvelopeToJsonText checks it.
nlohmann::json EnvelopeToJson(const Envelope& envelope);
// EnvelopeToJson as compact text with sorted keys and no newline (one JSONL
// line). kInvalidArgument if the payload type or a keyid is not valid UTF-8.
Expected<std::string> EnvelopeToJsonText(const Envelope& envelope);

// Strict parsing (see above). kInvalidArgument with one sentence naming the
// field, e.g. `The envelope's "signatures[0].sig" is not valid standard
// base64.` The JSON overload cannot see duplicated keys (nlohmann keeps the
// last); the text overload refuses them, so read bundle text with it.
Expected<Envelope> ParseEnvelopeJson(const nlohmann::json& json);
Expected<Envelope> ParseEnvelopeJsonText(std::string_view text);

}  // namespace plimsoll::attest

#endif  // PLIMSOLL_ATTEST_DSSE_H_
