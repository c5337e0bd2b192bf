#include "attest/dsse.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "attest/keys.h"
#include "attest/test_support.h"
#include "gtest/gtest.h"
#include "wire/base64.h"

namespace plimsoll::attest {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::Quote;
using testing::ReadFile;
using testing::RequireCommand;
using testing::RunShell;
using testing::TempDir;
using testing::WriteFile;

// ---- helpers ----------------------------------------------------------------

const SigningKey& TestKey() {
  static const SigningKey* key = [] {
    auto generated = SigningKey::Generate();
    EXPECT_TRUE(generated.ok());
    return new SigningKey(std::move(*generated));
  }();
  return *key;
}

// The message of a failed Status, or "" when it is ok.
std::string FailureMessage(const Status& status) {
  return status.ok() ? std::string() : status.error().message();
}

// ---- PAE --------------------------------------------------------------------

TEST(PaeTest, SpecExample) {
  // protocol.md's test vector.
  EXPECT_EQ(Pae("http://example.com/HelloWorld", "hello world"),
            "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
}

TEST(PaeTest, EmptyStrings) {
  EXPECT_EQ(Pae("", ""), "DSSEv1 0  0 ");
  EXPECT_EQ(Pae("t", ""), "DSSEv1 1 t 0 ");
  EXPECT_EQ(Pae("", "b"), "DSSEv1 0  1 b");
}

TEST(PaeTest, LengthsAreBytesInDecimalAndBodiesAreRaw) {
  std::string binary("a\0 b\n", 5);
  EXPECT_EQ(Pae("x y", binary), std::string("DSSEv1 3 x y 5 a\0 b\n", 20));
  std::string thousand(1000, 'z');
  EXPECT_EQ(Pae(kInTotoPayloadType, thousand),
            "DSSEv1 28 application/vnd.in-toto+json 1000 " + thousand);
  EXPECT_EQ(Pae("\xc3\xa9", "x"), "DSSEv1 2 \xc3\xa9 1 x");  // bytes, not characters
}

// ---- base64 -----------------------------------------------------------------

TEST(DsseTest, SignVerifyRoundTrip) {
  auto envelope = Sign(kInTotoPayloadType, "{\"_type\":\"statement\"}", TestKey());
  ASSERT_TRUE(envelope.ok()) << envelope.error().ToString();
  EXPECT_EQ(envelope->payload_type, kInTotoPayloadType);
  EXPECT_EQ(envelope->payload, "{\"_type\":\"statement\"}");
  ASSERT_EQ(envelope->signatures.size(), 1u);
  EXPECT_EQ(envelope->signatures[0].keyid, TestKey().verifying_key().key_id());
  EXPECT_EQ(envelope->signatures[0].sig.size(), kEd25519SignatureBytes);
  EXPECT_TRUE(TestKey()
                  .verifying_key()
                  .Verify(Pae(kInTotoPayloadType, envelope->payload), envelope->signatures[0].sig)
                  .ok());
  Status verdict = VerifyEnvelope(*envelope, TestKey().verifying_key());
  EXPECT_TRUE(verdict.ok()) << FailureMessage(verdict);

  // Ed25519 is deterministic.
  auto again = Sign(kInTotoPayloadType, "{\"_type\":\"statement\"}", TestKey());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *envelope);
}

TEST(DsseTest, SignRefusesAnEmptyOrNonUtf8PayloadType) {
  EXPECT_FALSE(Sign("", "x", TestKey()).ok());
  auto bad = Sign("text/\xff", "x", TestKey());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("UTF-8"), std::string::npos);
}

TEST(DsseTest, EmptyAndBinaryPayloadsVerify) {
  std::string binary;
  for (int i = 0; i < 256; ++i) binary.push_back(static_cast<char>(i));
  for (const std::string& payload : {std::string(), binary}) {
    auto envelope = Sign("application/octet-stream", payload, TestKey());
    ASSERT_TRUE(envelope.ok());
    EXPECT_TRUE(VerifyEnvelope(*envelope, TestKey().verifying_key()).ok());
  }
}

// Every single-byte change of every field is found, each with its reason.
TEST(DsseTest, EverySingleByteChangeFails) {
  const std::string payload =
      "{\"_type\":\"https://in-toto.io/Statement/v1\",\"subject\":[{\"name\":\"plimsoll-run\"}]}";
  auto signed_envelope = Sign(kInTotoPayloadType, payload, TestKey());
  ASSERT_TRUE(signed_envelope.ok());
  const Envelope& original = *signed_envelope;
  const VerifyingKey& key = TestKey().verifying_key();

  auto expect_refused = [&](const Envelope& changed, std::string_view reason, std::string_view what,
                            std::size_t index) {
    Status verdict = VerifyEnvelope(changed, key);
    ASSERT_FALSE(verdict.ok()) << what << " byte " << index;
    EXPECT_EQ(verdict.error().code(), ErrorCode::kDataLoss);
    EXPECT_NE(verdict.error().message().find(reason), std::string::npos)
        << what << " byte " << index << ": " << verdict.error().message();
  };
  for (unsigned char flip : {0x01, 0x80, 0xff}) {
    for (std::size_t i = 0; i < original.payload.size(); ++i) {
      Envelope changed = original;
      changed.payload[i] = static_cast<char>(changed.payload[i] ^ flip);
      expect_refused(changed, "does not verify over its payload type and payload", "payload", i);
    }
    for (std::size_t i = 0; i < original.payload_type.size(); ++i) {
      Envelope changed = original;
      changed.payload_type[i] = static_cast<char>(changed.payload_type[i] ^ flip);
      expect_refused(changed, "does not verify over its payload type and payload", "payloadType",
                     i);
    }
    for (std::size_t i = 0; i < original.signatures[0].sig.size(); ++i) {
      Envelope changed = original;
      changed.signatures[0].sig[i] = static_cast<char>(changed.signatures[0].sig[i] ^ flip);
      expect_refused(changed, "does not verify over its payload type and payload", "sig", i);
    }
    for (std::size_t i = 0; i < original.signatures[0].keyid.size(); ++i) {
      Envelope changed = original;
      changed.signatures[0].keyid[i] = static_cast<char>(changed.signatures[0].keyid[i] ^ flip);
      expect_refused(changed, "has no signature by key", "keyid", i);
    }
  }

  // Bytes added or removed.
  Envelope longer = original;
  longer.payload += " ";
  expect_refused(longer, "does not verify", "payload", payload.size());
  Envelope shorter = original;
  shorter.payload.pop_back();
  expect_refused(shorter, "does not verify", "payload", payload.size() - 1);
  Envelope moved = original;  // the same bytes split differently between type and body
  moved.payload_type += moved.payload.substr(0, 1);
  moved.payload.erase(0, 1);
  expect_refused(moved, "does not verify", "payloadType", moved.payload_type.size());
  Envelope truncated_sig = original;
  truncated_sig.signatures[0].sig.pop_back();
  expect_refused(truncated_sig, "is 63 bytes", "sig", 63);
}

TEST(DsseTest, WrongKeyFails) {
  auto envelope = Sign(kInTotoPayloadType, "payload", TestKey());
  ASSERT_TRUE(envelope.ok());
  auto other = SigningKey::Generate();
  ASSERT_TRUE(other.ok());

  Status verdict = VerifyEnvelope(*envelope, other->verifying_key());
  ASSERT_FALSE(verdict.ok());
  EXPECT_NE(
      verdict.error().message().find("has no signature by key " + other->verifying_key().key_id()),
      std::string::npos)
      << verdict.error().message();

  // A keyid forged to name the other key does not help.
  Envelope forged = *envelope;
  forged.signatures[0].keyid = other->verifying_key().key_id();
  Status forged_verdict = VerifyEnvelope(forged, other->verifying_key());
  ASSERT_FALSE(forged_verdict.ok());
  EXPECT_NE(forged_verdict.error().message().find("does not verify"), std::string::npos);
}

TEST(DsseTest, SignaturesOfOtherKeysAreIgnored) {
  auto other = SigningKey::Generate();
  ASSERT_TRUE(other.ok());
  auto ours = Sign(kInTotoPayloadType, "payload", TestKey());
  auto theirs = Sign(kInTotoPayloadType, "payload", *other);
  ASSERT_TRUE(ours.ok() && theirs.ok());

  Envelope both = *theirs;  // another key's signature first, then ours
  both.signatures.push_back(ours->signatures[0]);
  EXPECT_TRUE(VerifyEnvelope(both, TestKey().verifying_key()).ok());
  EXPECT_TRUE(VerifyEnvelope(both, other->verifying_key()).ok());

  Envelope garbage_other = both;  // a broken signature of another key is not our business
  garbage_other.signatures[0].sig = "not a signature";
  EXPECT_TRUE(VerifyEnvelope(garbage_other, TestKey().verifying_key()).ok());

  Envelope none;
  none.payload_type = std::string(kInTotoPayloadType);
  none.payload = "payload";
  Status verdict = VerifyEnvelope(none, TestKey().verifying_key());
  ASSERT_FALSE(verdict.ok());
  EXPECT_NE(verdict.error().message().find("has no signature"), std::string::npos);
}

// ---- JSON -------------------------------------------------------------------

TEST(DsseJsonTest, RoundTrip) {
  std::string binary("\0\xff{\"x\"}\n", 8);
  auto envelope = Sign(kInTotoPayloadType, binary, TestKey());
  ASSERT_TRUE(envelope.ok());
  auto text = EnvelopeToJsonText(*envelope);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->find('\n'), std::string::npos);
  EXPECT_EQ(*text, "{\"payload\":\"" + wire::EncodeBase64(binary) +
                       "\",\"payloadType\":\"application/vnd.in-toto+json\",\"signatures\":[{"
                       "\"keyid\":\"" +
                       TestKey().verifying_key().key_id() + "\",\"sig\":\"" +
                       wire::EncodeBase64(envelope->signatures[0].sig) + "\"}]}");
  auto parsed = ParseEnvelopeJsonText(*text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, *envelope);
  EXPECT_TRUE(VerifyEnvelope(*parsed, TestKey().verifying_key()).ok());

  auto from_json = ParseEnvelopeJson(EnvelopeToJson(*envelope));
  ASSERT_TRUE(from_json.ok());
  EXPECT_EQ(*from_json, *envelope);
}

TEST(DsseJsonTest, KeyidIsOptionalAsInTheSpec) {
  auto parsed = ParseEnvelopeJsonText(
      R"({"payload":"aGk=","payloadType":"t","signatures":[{"sig":"AAAA"}]})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->signatures[0].keyid, "");
  EXPECT_EQ(parsed->signatures[0].sig, std::string(3, '\0'));
}

TEST(DsseJsonTest, StrictParsingNamesTheField) {
  const std::string good_sig = R"("sig":"AAAA")";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"", "not valid JSON"},
      {"{", "not valid JSON"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[{"sig":"AAAA"}]} x)", "not valid JSON"},
      {"[]", "not a JSON object"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[{"sig":"AAAA"}],"extra":1})",
       "unknown field \"extra\""},
      {R"({"payloadType":"t","signatures":[{"sig":"AAAA"}]})", "has no \"payload\" field"},
      {R"({"payload":5,"payloadType":"t","signatures":[{"sig":"AAAA"}]})",
       "\"payload\" is not a string"},
      {R"({"payload":"aGk","payloadType":"t","signatures":[{"sig":"AAAA"}]})",
       "\"payload\" is not valid standard base64"},
      {R"({"payload":"aG-=","payloadType":"t","signatures":[{"sig":"AAAA"}]})",
       "\"payload\" is not valid standard base64"},
      {R"({"payload":"aGk=","signatures":[{"sig":"AAAA"}]})", "has no \"payloadType\" field"},
      {R"({"payload":"aGk=","payloadType":null,"signatures":[{"sig":"AAAA"}]})",
       "\"payloadType\" is not a string"},
      {R"({"payload":"aGk=","payloadType":"","signatures":[{"sig":"AAAA"}]})",
       "\"payloadType\" is empty"},
      {R"({"payload":"aGk=","payloadType":"t"})", "has no \"signatures\" field"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":{"sig":"AAAA"}})",
       "\"signatures\" is not an array"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[]})", "\"signatures\" is empty"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":["AAAA"]})",
       "\"signatures[0]\" is not an object"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[{"sig":"AAAA"},{"sig":"AAAA","x":1}]})",
       "\"signatures[1]\" has an unknown field \"x\""},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[{"keyid":7,"sig":"AAAA"}]})",
       "\"signatures[0].keyid\" is not a string"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[{"keyid":"k"}]})",
       "\"signatures[0]\" has no \"sig\" field"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[{"sig":true}]})",
       "\"signatures[0].sig\" is not a string"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[{"sig":"AAB="}]})",
       "\"signatures[0].sig\" is not valid standard base64"},
      {R"({"payload":"aGk=","payload":"aGk=","payloadType":"t","signatures":[{"sig":"AAAA"}]})",
       "field \"payload\" more than once"},
      {R"({"payload":"aGk=","payloadType":"t","signatures":[{"sig":"AAAA","sig":"AAAA"}]})",
       "field \"sig\" more than once"},
  };
  for (const auto& [text, reason] : refused) {
    auto parsed = ParseEnvelopeJsonText(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find(reason), std::string::npos)
        << text << "\n  -> " << parsed.error().message();
    // One sentence.
    const std::string& message = parsed.error().message();
    EXPECT_EQ(message.back(), '.') << message;
  }
}

TEST(DsseJsonTest, EnvelopeToJsonTextRefusesNonUtf8) {
  Envelope envelope;
  envelope.payload_type = "t\xff";
  envelope.signatures.push_back({"k", "s"});
  EXPECT_FALSE(EnvelopeToJsonText(envelope).ok());
  envelope.payload_type = "t";
  envelope.signatures[0].keyid = "\xc0\xaf";
  EXPECT_FALSE(EnvelopeToJsonText(envelope).ok());
}

// Any one-character change anywhere in an envelope's JSON line either fails
// to parse or fails to verify: there is no byte an attacker may change freely.
TEST(DsseJsonTest, EveryCharacterOfTheJsonLineIsCovered) {
  auto envelope = Sign(kInTotoPayloadType, "{\"subject\":\"plimsoll-run\"}", TestKey());
  ASSERT_TRUE(envelope.ok());
  auto text = EnvelopeToJsonText(*envelope);
  ASSERT_TRUE(text.ok());
  int parse_refusals = 0;
  int verify_refusals = 0;
  for (std::size_t i = 0; i < text->size(); ++i) {
    for (char replacement : {'A', 'a', '0', '/', '+', '=', '"', ' ', '\\', '}'}) {
      if ((*text)[i] == replacement) continue;
      std::string changed = *text;
      changed[i] = replacement;
      auto parsed = ParseEnvelopeJsonText(changed);
      if (!parsed.ok()) {
        ++parse_refusals;
        continue;
      }
      Status verdict = VerifyEnvelope(*parsed, TestKey().verifying_key());
      EXPECT_FALSE(verdict.ok()) << "offset " << i << " -> '" << replacement << "': " << changed;
      ++verify_refusals;
    }
  }
  EXPECT_GT(parse_refusals, 0);
  EXPECT_GT(verify_refusals, 0);
}

// ---- interoperability with the openssl command line -------------------------

class DsseInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RequireCommand("openssl"));
    // Ed25519 from the command line needs `pkeyutl -rawin` (OpenSSL 3; Debian 12 has 3.0).
    ASSERT_NE(RunShell("openssl pkeyutl -help").output.find("-rawin"), std::string::npos)
        << "this openssl cannot sign or verify Ed25519 from the command line";
    ASSERT_FALSE(dir_.path().empty());
  }
  fs::path File(const char* name) const { return dir_.path() / name; }

  TempDir dir_;
};

// (a) A signature made by our code verifies with `openssl pkeyutl -verify`.
TEST_F(DsseInteropTest, OurSignatureVerifiesWithOpenssl) {
  auto key = GenerateKeyFile(File("attest.key"));
  ASSERT_TRUE(key.ok()) << key.error().ToString();
  WriteFile(File("pub.pem"), PublicKeyPem(*key));
  const std::string payload = "{\"_type\":\"https://in-toto.io/Statement/v1\"}\n";
  auto envelope = Sign(kInTotoPayloadType, payload, *key);
  ASSERT_TRUE(envelope.ok());
  WriteFile(File("pae.bin"), Pae(envelope->payload_type, envelope->payload));
  WriteFile(File("sig.bin"), envelope->signatures[0].sig);

  const std::string verify = "openssl pkeyutl -verify -pubin -inkey " + Quote(File("pub.pem")) +
                             " -rawin -in " + Quote(File("pae.bin")) + " -sigfile " +
                             Quote(File("sig.bin"));
  CommandResult verified = RunShell(verify);
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  EXPECT_NE(verified.output.find("Signature Verified Successfully"), std::string::npos)
      << verified.output;

  // The PAE openssl checked is the one the shell builds independently.
  WriteFile(File("payload"), payload);
  CommandResult shell_pae = RunShell(
      "cd " + Quote(dir_.path()) +
      " && { printf 'DSSEv1 %s %s %s ' 28 'application/vnd.in-toto+json' "
      "\"$(wc -c < payload | tr -d ' ')\"; cat payload; } > shell-pae.bin && cmp shell-pae.bin "
      "pae.bin");
  EXPECT_EQ(shell_pae.exit_code, 0) << shell_pae.output;

  // And openssl is not just saying yes: a changed PAE fails there too.
  std::string changed = Pae(envelope->payload_type, envelope->payload);
  changed[changed.size() - 2] ^= 1;
  WriteFile(File("pae.bin"), changed);
  CommandResult refused = RunShell(verify);
  EXPECT_NE(refused.exit_code, 0) << refused.output;
}

// (b) An envelope built by the openssl command line and the shell (its own
// key, its own PAE, its own base64 and JSON) verifies with VerifyEnvelope.
TEST_F(DsseInteropTest, OpensslSignatureVerifiesWithOurs) {
  const std::string script =
      "set -e; cd " + Quote(dir_.path()) +
      "\n"
      "umask 077\n"
      "openssl genpkey -algorithm ed25519 -out key.pem\n"
      "openssl pkey -in key.pem -pubout -out pub.pem\n"
      "printf '{\"_type\":\"https://in-toto.io/Statement/v1\",\"subject\":[]}\\n' > payload\n"
      "type='application/vnd.in-toto+json'\n"
      "{ printf 'DSSEv1 %s %s %s ' \"${#type}\" \"$type\" \"$(wc -c < payload | tr -d ' ')\";"
      " cat payload; } > pae.bin\n"
      "openssl pkeyutl -sign -inkey key.pem -rawin -in pae.bin -out sig.bin\n"
      "keyid=$(openssl pkey -pubin -in pub.pem -outform DER | sha256sum | cut -c1-64)\n"
      "printf '{\"payload\":\"%s\",\"payloadType\":\"%s\",\"signatures\":[{\"keyid\":\"%s\","
      "\"sig\":\"%s\"}]}' \"$(base64 -w0 payload)\" \"$type\" \"$keyid\" \"$(base64 -w0 sig.bin)\""
      " > envelope.json\n";
  CommandResult made = RunShell("sh -c \"$(cat <<'PLIMSOLL_EOF'\n" + script + "PLIMSOLL_EOF\n)\"");
  ASSERT_EQ(made.exit_code, 0) << made.output;

  auto public_key = LoadPublicKey(File("pub.pem"));
  ASSERT_TRUE(public_key.ok()) << public_key.error().ToString();
  auto envelope = ParseEnvelopeJsonText(ReadFile(File("envelope.json")));
  ASSERT_TRUE(envelope.ok()) << envelope.error().ToString();
  EXPECT_EQ(envelope->payload_type, kInTotoPayloadType);
  EXPECT_EQ(Pae(envelope->payload_type, envelope->payload), ReadFile(File("pae.bin")));
  Status verdict = VerifyEnvelope(*envelope, *public_key);
  EXPECT_TRUE(verdict.ok()) << FailureMessage(verdict);

  // The private key openssl made loads too, and signs the same bytes
  // (Ed25519 is deterministic).
  auto private_key = LoadPrivateKey(File("key.pem"));
  ASSERT_TRUE(private_key.ok()) << private_key.error().ToString();
  EXPECT_EQ(private_key->verifying_key().key_id(), public_key->key_id());
  auto ours = Sign(envelope->payload_type, envelope->payload, *private_key);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(ours->signatures[0].sig, ReadFile(File("sig.bin")));

  // One changed payload byte: refused.
  Envelope changed = *envelope;
  changed.payload[3] ^= 1;
  EXPECT_FALSE(VerifyEnvelope(changed, *public_key).ok());
}

}  // namespace
}  // namespace plimsoll::attest
