// Checks testdata/records/vectors.json: the committed file is what the
// generator writes today, every digest recomputes from the file's wire-form
// inputs, the session chain links, and changing any covered input leaf
// changes a digest.
#include "record/vectors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "plimsoll/record.h"
#include "plimsoll/wire.h"
#include "record/digest_builder.h"
#include "wire/base64.h"

namespace plimsoll::record {
namespace {

using Json = nlohmann::json;

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

const Json& Vectors() {
  static const Json file = Json::parse(ReadFile(PLIMSOLL_RECORD_VECTORS));
  return file;
}

TEST(VectorsTest, CommittedFileIsUpToDate) {
  // If this fails after an intended change, regenerate:
  //   build/<dir>/bin/plimsoll-record-vectors --output testdata/records/vectors.json
  EXPECT_EQ(ReadFile(PLIMSOLL_RECORD_VECTORS), GenerateVectorsJson());
}

TEST(VectorsTest, CoversWhatTheSpecAsks) {
  const Json& vectors = Vectors()["vectors"];
  EXPECT_GE(vectors.size(), 15u);
  std::map<std::string, int> kinds;
  for (const Json& vector : vectors) {
    if (!vector.contains("request")) continue;
    for (const char* kind : {"javascript", "python", "project", "cell"}) {
      if (vector["request"].contains(kind)) ++kinds[kind];
    }
  }
  for (const char* kind : {"javascript", "python", "project", "cell"})
    EXPECT_GT(kinds[kind], 0) << kind;
}

double FloatFromJson(const Json& value) {
  if (value.is_number()) return value.get<double>();
  std::string text = value.get<std::string>();
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  return text == "Infinity" ? std::numeric_limits<double>::infinity()
                            : -std::numeric_limits<double>::infinity();
}

std::string EncodingDigest(const Json& encoding, std::string* transcript) {
  DigestBuilder digest(encoding["domain"].get<std::string>(), transcript);
  for (const Json& field : encoding["fields"]) {
    std::string name = field["name"].get<std::string>();
    std::string type = field["type"].get<std::string>();
    const Json& value = field["value"];
    if (type == "integer") digest.Integer(name, value.get<int64_t>());
    if (type == "count") digest.Count(name, value.get<size_t>());
    if (type == "boolean") digest.Boolean(name, value.get<bool>());
    if (type == "float") digest.Float(name, FloatFromJson(value));
    if (type == "bytes") digest.Bytes(name, value.get<std::string>());
  }
  return std::move(digest).Finish();
}

// The digests a vector's inputs give. An input that does not parse is
// named in *refused (and its digests are ""): callers that changed an input
// must treat that as a failure, not as "the digest changed".
std::map<std::string, std::string> Recompute(const Json& vector, std::string* refused = nullptr) {
  std::map<std::string, std::string> out;
  auto refuse = [&](const char* what, const Error& error) {
    if (refused != nullptr && refused->empty())
      *refused = std::string(what) + ": " + error.message();
  };
  if (vector.contains("request")) {
    auto request = ParseRequestJson(vector["request"].dump());
    if (!request.ok()) refuse("request", request.error());
    out["request_sha256"] = request.ok() ? RequestDigest(*request) : "";
  }
  if (vector.contains("result")) {
    auto result = ParseResultJson(vector["result"].dump());
    if (!result.ok()) refuse("result", result.error());
    out["result_sha256"] = result.ok() ? ResultDigest(*result) : "";
    out["record_sha256"] = result.ok() ? RecordDigest(result->record) : "";
  }
  if (vector.contains("limits")) {
    auto limits = LimitsFromJson(vector["limits"]);
    if (!limits.ok()) refuse("limits", limits.error());
    out["policy_sha256"] = limits.ok() ? PolicyDigest(*limits) : "";
  }
  if (vector.contains("session_id")) {
    out["session_sha256"] = SessionIdDigest(vector["session_id"].get<std::string>());
  }
  if (vector.contains("encoding"))
    out["encoding_sha256"] = EncodingDigest(vector["encoding"], nullptr);
  return out;
}

TEST(VectorsTest, EveryDigestRecomputesFromTheInputs) {
  for (const Json& vector : Vectors()["vectors"]) {
    SCOPED_TRACE(vector["name"].get<std::string>());
    auto digests = Recompute(vector);
    ASSERT_FALSE(digests.empty());
    for (const auto& [key, digest] : digests)
      EXPECT_EQ(digest, vector[key].get<std::string>()) << key;
    if (vector.contains("result")) {
      const Json& record = vector["result"]["record"];
      EXPECT_EQ(record["record_sha256"], vector["record_sha256"]);
      EXPECT_EQ(record["result_sha256"], vector["result_sha256"]);
      if (vector.contains("request")) {
        EXPECT_EQ(record["request_sha256"], vector["request_sha256"]);
        auto request = ParseRequestJson(vector["request"].dump());
        auto result = ParseResultJson(vector["result"].dump());
        ASSERT_TRUE(request.ok() && result.ok());
        if (result->record.session) {
          // A session call's record: believed only as a link of its chain,
          // and refused as a single run's (data loss).
          const SessionLink& link = *result->record.session;
          ChainState chain{link.session_sha256, link.sequence - 1, link.previous_sha256};
          Status status = CheckExchange(*request, *result, &chain);
          EXPECT_TRUE(status.ok()) << status.error().ToString();
          Status single = CheckExchange(*request, *result);
          ASSERT_FALSE(single.ok());
          EXPECT_EQ(single.error().code(), ErrorCode::kDataLoss);
        } else {
          Status status = CheckExchange(*request, *result);
          EXPECT_TRUE(status.ok()) << status.error().ToString();
        }
      }
    }
    if (vector.contains("encoding")) {
      std::string transcript;
      EncodingDigest(vector["encoding"], &transcript);
      EXPECT_EQ(LowerHex(transcript), vector["encoding_hex"].get<std::string>());
    }
  }
}

TEST(VectorsTest, SessionChainsLink) {
  std::map<std::string, const Json*> by_name;
  for (const Json& vector : Vectors()["vectors"])
    by_name[vector["name"].get<std::string>()] = &vector;
  ASSERT_FALSE(Vectors()["chains"].empty());
  for (const Json& chain : Vectors()["chains"]) {
    ChainState state{SessionIdDigest(chain["session_id"].get<std::string>()), 0, ""};
    for (const Json& name : chain["vectors"]) {
      const Json& vector = *by_name.at(name.get<std::string>());
      auto request = ParseRequestJson(vector["request"].dump());
      auto result = ParseResultJson(vector["result"].dump());
      ASSERT_TRUE(request.ok() && result.ok());
      Status status = CheckExchange(*request, *result, &state);
      ASSERT_TRUE(status.ok()) << name << ": " << status.error().ToString();
    }
    EXPECT_EQ(state.last_sequence, static_cast<int64_t>(chain["vectors"].size()));
  }
}

// Leaves a digest deliberately does not cover, and outputs.
bool IsExempt(const std::string& pointer) {
  return pointer == "/request/trace_id" || pointer == "/request/environment" ||
         pointer == "/result/record/record_sha256";
}

// The wire's enumerations, by the leaf's key: a changed enum leaf takes
// another valid value (a misspelt one would only be refused, which proves
// nothing about the digest).
const std::map<std::string, std::vector<std::string>>& Enumerations() {
  static const std::map<std::string, std::vector<std::string>> enumerations = {
      {"isolation", {"unknown", "process", "container", "kernel", "vm"}},
      {"minimum_isolation", {"process", "container", "kernel", "vm"}},
      {"kind", {"javascript", "python", "project", "cell"}},
      {"outcome", {"completed", "setup_failed", "timed_out"}},
      {"language", {"javascript", "python"}},
  };
  return enumerations;
}

std::string LastKey(const std::string& pointer) {
  return pointer.substr(pointer.rfind('/') + 1);
}

bool IsEnumLeaf(const std::string& pointer) {
  // Only the wire form's own fields, not names inside an encoding vector.
  return pointer.rfind("/encoding/", 0) != 0 && Enumerations().count(LastKey(pointer)) != 0;
}

// Another character of the same kind, so that the text stays well formed
// (a hex digit stays a hex digit, ASCII stays ASCII).
char OtherCharacter(char c) {
  if (std::isxdigit(static_cast<unsigned char>(c))) return c == '0' ? '1' : '0';
  return static_cast<char>(c ^ 1);
}

// The smallest change of a leaf at `position` (first or last byte for text
// and bytes; the same single change for numbers, flags and enums).
enum class Position { kFirst, kLast };

Json Mutate(const Json& leaf, const std::string& pointer, Position position) {
  if (leaf.is_boolean()) return !leaf.get<bool>();
  if (leaf.is_number_integer()) return leaf.get<int64_t>() + 1;
  if (leaf.is_number_float()) return leaf.get<double>() + 1.0;
  std::string text = leaf.get<std::string>();
  if (IsEnumLeaf(pointer)) {
    const std::vector<std::string>& values = Enumerations().at(LastKey(pointer));
    if (text.empty()) return values.front();  // "" means unset: set it
    auto it = std::find(values.begin(), values.end(), text);
    if (it == values.end()) return text;  // not one of ours: the test names it
    return *(++it == values.end() ? values.begin() : it);
  }
  // A float's wire spelling of NaN or an infinity: another float.
  if (text == "NaN" || text == "Infinity" || text == "-Infinity") return 1.5;
  if (LastKey(pointer) == "base64") {
    std::string bytes = *wire::DecodeBase64(text);
    char& byte = position == Position::kFirst ? bytes.front() : bytes.back();
    byte = static_cast<char>(byte ^ 1);
    return wire::EncodeBase64(bytes);
  }
  if (text.empty()) return "x";
  size_t at = position == Position::kFirst ? 0 : text.size() - 1;
  if (static_cast<unsigned char>(text[at]) >= 0x80) return text + "x";  // keep UTF-8 valid
  text[at] = OtherCharacter(text[at]);
  return text;
}

TEST(VectorsTest, ChangingAnyCoveredInputLeafChangesADigest) {
  int mutations = 0;
  for (const Json& vector : Vectors()["vectors"]) {
    std::string name = vector["name"].get<std::string>();
    auto expected = Recompute(vector);
    Json inputs = Json::object();
    for (const char* key : {"request", "result", "limits", "session_id", "encoding"}) {
      if (vector.contains(key)) inputs[key] = vector[key];
    }
    const Json leaves = inputs.flatten();
    for (const auto& [pointer_text, value] : leaves.items()) {
      Json::json_pointer pointer(pointer_text);
      const Json& leaf = inputs.at(pointer);
      if (!leaf.is_primitive() || leaf.is_null()) continue;  // empty arrays flatten to null
      if (pointer_text.find("/encoding/fields/") == 0 &&
          pointer_text.substr(pointer_text.rfind('/')) == "/type") {
        continue;  // a type tag, not an input
      }
      if (pointer_text == "/request/protocol") {
        // The wire refuses every protocol but this build's, so the changed
        // number cannot travel: change it after parsing instead.
        auto request = ParseRequestJson(vector["request"].dump());
        ASSERT_TRUE(request.ok()) << name;
        Request other = *request;
        other.protocol = request->protocol + 1;
        EXPECT_NE(RequestDigest(other), RequestDigest(*request)) << name << " " << pointer_text;
        ++mutations;
        continue;
      }
      // Text and bytes change at their first and at their last byte; numbers,
      // flags, enums and the special floats have one change.
      const bool two_ends = leaf.is_string() && !IsEnumLeaf(pointer_text) &&
                            Mutate(leaf, pointer_text, Position::kFirst).is_string();
      for (Position position : {Position::kFirst, Position::kLast}) {
        if (position == Position::kLast && !two_ends) break;
        Json mutated = Mutate(leaf, pointer_text, position);
        if (mutated == leaf) {
          ADD_FAILURE() << name << " " << pointer_text << ": " << leaf
                        << " is not a value of its enumeration";
          continue;
        }
        Json changed = vector;
        changed[pointer] = mutated;
        // The changed input must still parse: a refusal proves nothing about
        // what the digest covers.
        std::string refused;
        bool differs = Recompute(changed, &refused) != expected;
        if (!refused.empty()) {
          ADD_FAILURE() << name << " " << pointer_text << " = " << mutated
                        << ": the changed input was refused (" << refused << ")";
          continue;
        }
        if (IsExempt(pointer_text)) {
          EXPECT_FALSE(differs) << name << " " << pointer_text << " is documented as not covered";
        } else {
          EXPECT_TRUE(differs) << name << " " << pointer_text << " = " << mutated;
          ++mutations;
        }
      }
    }
  }
  EXPECT_GT(mutations, 300);
}

}  // namespace
}  // namespace plimsoll::record
