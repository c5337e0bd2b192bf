#include "attest/dsse.h"

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "base/utf8.h"
#include "wire/base64.h"

namespace plimsoll::attest {
namespace {

using Json = nlohmann::json;

// `key` as an ASCII-only JSON string of at most ~64 characters, for messages.
std::string ShowKey(const std::string& key) {
  std::string shown = Json(key).dump(-1, ' ', /*ensure_ascii=*/true);
  if (shown.size() > 64) shown = shown.substr(0, 60) + "...\"";
  return shown;
}

Error FieldError(std::string_view field, std::string_view problem) {
  return Failure(ErrorCode::kInvalidArgument,
                 "The envelope's \"" + std::string(field) + "\" " + std::string(problem) + ".");
}

// Reads a required string field (present, string) of `object`.
Expected<std::string> RequiredString(const Json& object, const char* key, const std::string& field,
                                     std::string_view owner) {
  auto it = object.find(key);
  if (it == object.end()) {
    return Failure(ErrorCode::kInvalidArgument,
                   std::string(owner) + " has no \"" + key + "\" field.");
  }
  if (!it->is_string()) return FieldError(field, "is not a string");
  return it->get<std::string>();
}

Expected<std::string> Base64Field(const Json& object, const char* key, const std::string& field,
                                  std::string_view owner) {
  auto text = RequiredString(object, key, field, owner);
  if (!text.ok()) return text.error();
  std::optional<std::string> bytes = wire::DecodeBase64(*text);
  if (!bytes) {
    return FieldError(field,
                      "is not valid standard base64 (RFC 4648, padded, in its one canonical "
                      "form, no whitespace)");
  }
  return std::move(*bytes);
}

Status OnlyKnownKeys(const Json& object, std::initializer_list<std::string_view> known,
                     std::string_view owner) {
  for (const auto& item : object.items()) {
    bool found = false;
    for (std::string_view name : known) found = found || item.key() == name;
    if (!found) {
      return Failure(ErrorCode::kInvalidArgument,
                     std::string(owner) + " has an unknown field " + ShowKey(item.key()) + ".");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string Pae(std::string_view payload_type, std::string_view payload) {
  std::string out = "DSSEv1 ";
  out += std::to_string(payload_type.size());
  out += ' ';
  out += payload_type;
  out += ' ';
  out += std::to_string(payload.size());
  out += ' ';
  out += payload;
  return out;
}

Expected<Envelope> Sign(std::string_view payload_type, std::string_view payload,
                        const SigningKey& key) {
  if (payload_type.empty()) {
    return Failure(ErrorCode::kInvalidArgument, "A DSSE payload type must not be empty.");
  }
  if (!base::IsValidUtf8(payload_type)) {
    return Failure(ErrorCode::kInvalidArgument, "A DSSE payload type must be valid UTF-8.");
  }
  auto signature = key.Sign(Pae(payload_type, payload));
  if (!signature.ok()) return signature.error();
  Envelope envelope;
  envelope.payload_type = std::string(payload_type);
  envelope.payload = std::string(payload);
  envelope.signatures.push_back({key.verifying_key().key_id(), std::move(*signature)});
  return envelope;
}

Status VerifyEnvelope(const Envelope& envelope, const VerifyingKey& key) {
  const std::string& key_id = key.key_id();
  std::string pae;
  std::optional<Error> failure;
  for (const DsseSignature& signature : envelope.signatures) {
    if (signature.keyid != key_id) continue;
    if (signature.sig.size() != kEd25519SignatureBytes) {
      failure = Failure(ErrorCode::kDataLoss, "The envelope's signature by key " + key_id + " is " +
                                                  std::to_string(signature.sig.size()) +
                                                  " bytes; an Ed25519 signature is 64.");
      continue;
    }
    if (pae.empty()) pae = Pae(envelope.payload_type, envelope.payload);
    Status verdict = key.Verify(pae, signature.sig);
    if (verdict.ok()) return Status::Ok();
    if (verdict.error().code() != ErrorCode::kDataLoss) return verdict;  // OpenSSL failed
    failure = Failure(ErrorCode::kDataLoss,
                      "The envelope's signature by key " + key_id +
                          " does not verify over its payload type and payload: the envelope "
                          "changed after it was signed.");
  }
  if (failure) return *failure;
  return Failure(ErrorCode::kDataLoss, "The envelope has no signature by key " + key_id +
                                           " (it has " +
                                           std::to_string(envelope.signatures.size()) +
                                           " signature(s), all naming other keys).");
}

Json EnvelopeToJson(const Envelope& envelope) {
  Json signatures = Json::array();
  for (const DsseSignature& signature : envelope.signatures) {
    signatures.push_back({{"keyid", signature.keyid}, {"sig", wire::EncodeBase64(signature.sig)}});
  }
  return Json{{"payload", wire::EncodeBase64(envelope.payload)},
              {"payloadType", envelope.payload_type},
              {"signatures", std::move(signatures)}};
}

Expected<std::string> EnvelopeToJsonText(const Envelope& envelope) {
  if (!base::IsValidUtf8(envelope.payload_type)) {
    return Failure(ErrorCode::kInvalidArgument,
                   "The envelope's payload type is not valid UTF-8, so it has no JSON form.");
  }
  for (const DsseSignature& signature : envelope.signatures) {
    if (!base::IsValidUtf8(signature.keyid)) {
      return Failure(ErrorCode::kInvalidArgument,
                     "A keyid of the envelope is not valid UTF-8, so it has no JSON form.");
    }
  }
  return EnvelopeToJson(envelope).dump();
}

Expected<Envelope> ParseEnvelopeJson(const Json& json) {
  constexpr std::string_view kOwner = "The envelope";
  if (!json.is_object()) {
    return Failure(ErrorCode::kInvalidArgument, "The envelope is not a JSON object.");
  }
  PLIMSOLL_RETURN_IF_ERROR(OnlyKnownKeys(json, {"payload", "payloadType", "signatures"}, kOwner));
  Envelope envelope;
  auto payload = Base64Field(json, "payload", "payload", kOwner);
  if (!payload.ok()) return payload.error();
  envelope.payload = std::move(*payload);
  auto payload_type = RequiredString(json, "payloadType", "payloadType", kOwner);
  if (!payload_type.ok()) return payload_type.error();
  if (payload_type->empty()) return FieldError("payloadType", "is empty");
  envelope.payload_type = std::move(*payload_type);

  auto signatures = json.find("signatures");
  if (signatures == json.end()) {
    return Failure(ErrorCode::kInvalidArgument, "The envelope has no \"signatures\" field.");
  }
  if (!signatures->is_array()) return FieldError("signatures", "is not an array");
  if (signatures->empty()) {
    return FieldError("signatures", "is empty; DSSE requires at least one signature");
  }
  for (std::size_t i = 0; i < signatures->size(); ++i) {
    const Json& item = (*signatures)[i];
    std::string field = "signatures[" + std::to_string(i) + "]";
    if (!item.is_object()) return FieldError(field, "is not an object");
    std::string owner = "The envelope's \"" + field + "\"";
    PLIMSOLL_RETURN_IF_ERROR(OnlyKnownKeys(item, {"keyid", "sig"}, owner));
    DsseSignature signature;
    auto keyid = item.find("keyid");
    if (keyid != item.end()) {
      if (!keyid->is_string()) return FieldError(field + ".keyid", "is not a string");
      signature.keyid = keyid->get<std::string>();
    }
    auto sig = Base64Field(item, "sig", field + ".sig", owner);
    if (!sig.ok()) return sig.error();
    signature.sig = std::move(*sig);
    envelope.signatures.push_back(std::move(signature));
  }
  return envelope;
}

Expected<Envelope> ParseEnvelopeJsonText(std::string_view text) {
  // nlohmann keeps the last of duplicated keys; a second "payload" could then
  // mean one thing to us and another to another reader. Refuse duplicates.
  std::vector<std::set<std::string>> open_objects;
  std::optional<std::string> duplicate;
  Json::parser_callback_t watch = [&](int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
        open_objects.emplace_back();
        break;
      case Json::parse_event_t::object_end:
        if (!open_objects.empty()) open_objects.pop_back();
        break;
      case Json::parse_event_t::key:
        if (const auto* key = parsed.get_ptr<const std::string*>();
            key != nullptr && !open_objects.empty() && !open_objects.back().insert(*key).second &&
            !duplicate) {
          duplicate = *key;
        }
        break;
      default:
        break;
    }
    return true;
  };
  Json json = Json::parse(text.begin(), text.end(), watch, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    return Failure(ErrorCode::kInvalidArgument, "The envelope is not valid JSON.");
  }
  if (duplicate) {
    return Failure(ErrorCode::kInvalidArgument,
                   "The envelope has the field " + ShowKey(*duplicate) + " more than once.");
  }
  return ParseEnvelopeJson(json);
}

}  // namespace plimsoll::attest
