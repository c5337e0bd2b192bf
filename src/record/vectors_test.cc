// Checks testdata/records/vectors.json: the committed file is what the
// generator writes today, every digest recomputes from the file's wire-form
// inputs, the session chain links, and changing any covered input leaf
// changes a digest.
#include "record/vectors.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>

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

// The digests a vector's inputs give; "" when an input does not parse.
std::map<std::string, std::string> Recompute(const Json& vector) {
  std::map<std::string, std::string> out;
  if (vector.contains("request")) {
    auto request = ParseRequestJson(vector["request"].dump());
    out["request_sha256"] = request.ok() ? RequestDigest(*request) : "";
  }
  if (vector.contains("result")) {
    auto result = ParseResultJson(vector["result"].dump());
    out["result_sha256"] = result.ok() ? ResultDigest(*result) : "";
    out["record_sha256"] = result.ok() ? RecordDigest(result->record) : "";
  }
  if (vector.contains("limits")) {
    auto limits = LimitsFromJson(vector["limits"]);
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
        Status status = CheckExchange(*request, *result);
        EXPECT_TRUE(status.ok()) << status.error().ToString();
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

Json Mutate(const Json& leaf, const std::string& pointer) {
  if (leaf.is_boolean()) return !leaf.get<bool>();
  if (leaf.is_number_integer()) return leaf.get<int64_t>() + 1;
  if (leaf.is_number_float()) return leaf.get<double>() + 1.0;
  std::string text = leaf.get<std::string>();
  if (pointer.size() > 7 && pointer.substr(pointer.size() - 7) == "/base64") {
    std::string bytes = *wire::DecodeBase64(text);
    bytes[0] = static_cast<char>(bytes[0] ^ 1);
    return wire::EncodeBase64(bytes);
  }
  if (text.empty() || static_cast<unsigned char>(text[0]) >= 0x80) return text + "x";
  text[0] = static_cast<char>(text[0] ^ 1);
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
      Json changed = vector;
      changed[pointer] = Mutate(leaf, pointer_text);
      bool differs = Recompute(changed) != expected;
      if (IsExempt(pointer_text)) {
        EXPECT_FALSE(differs) << name << " " << pointer_text << " is documented as not covered";
      } else {
        EXPECT_TRUE(differs) << name << " " << pointer_text;
        ++mutations;
      }
    }
  }
  EXPECT_GT(mutations, 300);
}

}  // namespace
}  // namespace plimsoll::record
