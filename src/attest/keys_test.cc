#include "attest/keys.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "attest/test_support.h"
#include "gtest/gtest.h"

namespace plimsoll::attest {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::ReadFile;
using testing::RequireCommand;
using testing::RunShell;
using testing::TempDir;
using testing::WriteFile;

// RFC 8032 §7.1, TEST 1: secret key, public key and the signature of "".
constexpr char kRfcPrivatePem[] =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g\n"
    "-----END PRIVATE KEY-----\n";
constexpr char kRfcPublicPem[] =
    "-----BEGIN PUBLIC KEY-----\n"
    "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n"
    "-----END PUBLIC KEY-----\n";
// sha256(302a300506032b6570032100 || public key), by `xxd -r -p | sha256sum`.
constexpr char kRfcKeyId[] = "06e3fd8fda29bb60ab59557de61edb0aecdb231134be30e75b455f8e1b792fa9";
constexpr char kRfcEmptySignatureHex[] =
    "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9"
    "b46bd25bf5f0595bbe24655141438e7a100b";

std::string Hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 0xf];
  }
  return out;
}

mode_t ModeOf(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0);
  return info.st_mode & 07777;
}

// PEM of a key of another type (X25519: also 32-byte keys, another algorithm).
struct ForeignKey {
  std::string private_pem;
  std::string public_pem;
};

ForeignKey MakeX25519Key() {
  ForeignKey out;
  std::unique_ptr<EVP_PKEY, EvpPkeyDeleter> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "X25519"));
  if (!key) return out;
  auto write = [](auto function) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
    function(bio.get());
    char* data = nullptr;
    long size = BIO_get_mem_data(bio.get(), &data);  // NOLINT(runtime/int)
    return std::string(data, static_cast<std::size_t>(size));
  };
  out.private_pem = write([&](BIO* bio) {
    PEM_write_bio_PrivateKey(bio, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  });
  out.public_pem = write([&](BIO* bio) { PEM_write_bio_PUBKEY(bio, key.get()); });
  return out;
}

TEST(KeysTest, Rfc8032KnownAnswer) {
  auto key = SigningKey::FromPem(kRfcPrivatePem);
  ASSERT_TRUE(key.ok()) << key.error().ToString();
  EXPECT_EQ(key->verifying_key().key_id(), kRfcKeyId);
  EXPECT_EQ(KeyId(key->verifying_key()), kRfcKeyId);
  EXPECT_EQ(PublicKeyPem(*key), kRfcPublicPem);
  EXPECT_EQ(key->verifying_key().der().size(), 44u);
  auto signature = key->Sign("");
  ASSERT_TRUE(signature.ok());
  EXPECT_EQ(Hex(*signature), kRfcEmptySignatureHex);

  auto public_key = VerifyingKey::FromPem(kRfcPublicPem);
  ASSERT_TRUE(public_key.ok()) << public_key.error().ToString();
  EXPECT_EQ(public_key->key_id(), kRfcKeyId);
  EXPECT_TRUE(public_key->Verify("", *signature).ok());
}

TEST(KeysTest, SignAndVerify) {
  auto key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  auto signature = key->Sign("message");
  ASSERT_TRUE(signature.ok());
  EXPECT_EQ(signature->size(), kEd25519SignatureBytes);
  EXPECT_TRUE(key->verifying_key().Verify("message", *signature).ok());

  Status changed = key->verifying_key().Verify("messagE", *signature);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(changed.error().message().find("does not verify"), std::string::npos);

  Status short_signature = key->verifying_key().Verify("message", signature->substr(1));
  ASSERT_FALSE(short_signature.ok());
  EXPECT_NE(short_signature.error().message().find("63 bytes"), std::string::npos);

  auto other = SigningKey::Generate();
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->verifying_key().key_id(), key->verifying_key().key_id());
  EXPECT_FALSE(other->verifying_key().Verify("message", *signature).ok());
}

TEST(KeysTest, KeyIdIsLowercaseHexOf64) {
  auto key = SigningKey::Generate();
  ASSERT_TRUE(key.ok());
  const std::string& id = key->verifying_key().key_id();
  ASSERT_EQ(id.size(), 64u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(KeysTest, GenerateKeyFileWritesPkcs8With0600) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  mode_t old_umask = umask(0);  // a permissive umask must not widen the key's mode
  auto key = GenerateKeyFile(dir.path() / "attest.key");
  umask(old_umask);
  ASSERT_TRUE(key.ok()) << key.error().ToString();
  EXPECT_EQ(ModeOf(dir.path() / "attest.key"), 0600u);
  std::string text = ReadFile(dir.path() / "attest.key");
  EXPECT_EQ(text.rfind("-----BEGIN PRIVATE KEY-----\n", 0), 0u) << text.substr(0, 40);

  auto loaded = LoadPrivateKey(dir.path() / "attest.key");
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  EXPECT_EQ(loaded->verifying_key().key_id(), key->verifying_key().key_id());

  // Nothing else is left in the directory (no temporary file).
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST(KeysTest, GenerateKeyFileRefusesToOverwrite) {
  TempDir dir;
  fs::path path = dir.path() / "attest.key";
  ASSERT_TRUE(GenerateKeyFile(path).ok());
  std::string before = ReadFile(path);

  auto again = GenerateKeyFile(path);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_NE(again.error().message().find(path.string()), std::string::npos);
  EXPECT_NE(again.error().message().find("already exists"), std::string::npos);
  EXPECT_EQ(ReadFile(path), before);

  // A dangling symlink is a name too: following it would create a file elsewhere.
  fs::path link = dir.path() / "dangling.key";
  fs::create_symlink(dir.path() / "nowhere", link);
  auto through_link = GenerateKeyFile(link);
  ASSERT_FALSE(through_link.ok());
  EXPECT_NE(through_link.error().message().find("already exists"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "nowhere"));

  int entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir.path())) ++entries;
  EXPECT_EQ(entries, 2);  // the key and the link, no temporary files
}

TEST(KeysTest, GenerateKeyFileNeedsADirectoryAndAName) {
  TempDir dir;
  auto missing_directory = GenerateKeyFile(dir.path() / "missing" / "attest.key");
  ASSERT_FALSE(missing_directory.ok());
  EXPECT_NE(missing_directory.error().message().find("missing"), std::string::npos);
  EXPECT_FALSE(GenerateKeyFile(dir.path() / "").ok());
}

TEST(KeysTest, LoadPrivateKeyRefusesAFileOthersCanRead) {
  TempDir dir;
  fs::path path = dir.path() / "attest.key";
  ASSERT_TRUE(GenerateKeyFile(path).ok());
  for (mode_t mode : {0640, 0604, 0644, 0660, 0610}) {
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    auto key = LoadPrivateKey(path);
    ASSERT_FALSE(key.ok()) << std::oct << mode;
    EXPECT_EQ(key.error().code(), ErrorCode::kFailedPrecondition);
    EXPECT_NE(key.error().message().find("chmod 600"), std::string::npos) << key.error().message();
    EXPECT_NE(key.error().message().find(path.string()), std::string::npos);
  }
  ASSERT_EQ(chmod(path.c_str(), 0400), 0);
  EXPECT_TRUE(LoadPrivateKey(path).ok());
}

TEST(KeysTest, LoadRefusesWhatIsNotAnEd25519Key) {
  TempDir dir;
  auto missing = LoadPrivateKey(dir.path() / "missing.key");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(LoadPublicKey(dir.path() / "missing.pub").error().code(), ErrorCode::kNotFound);

  ForeignKey x25519 = MakeX25519Key();
  ASSERT_FALSE(x25519.private_pem.empty());
  WriteFile(dir.path() / "x.key", x25519.private_pem);
  WriteFile(dir.path() / "x.pub", x25519.public_pem);
  auto foreign_private = LoadPrivateKey(dir.path() / "x.key");
  ASSERT_FALSE(foreign_private.ok());
  EXPECT_NE(
      foreign_private.error().message().find("X25519 key; plimsoll-attest accepts only Ed25519"),
      std::string::npos)
      << foreign_private.error().message();
  auto foreign_public = LoadPublicKey(dir.path() / "x.pub");
  ASSERT_FALSE(foreign_public.ok());
  EXPECT_NE(foreign_public.error().message().find("accepts only Ed25519"), std::string::npos);

  // The halves swapped.
  WriteFile(dir.path() / "public-as-private.key", kRfcPublicPem);
  WriteFile(dir.path() / "private-as-public.pub", kRfcPrivatePem);
  auto swapped_private = LoadPrivateKey(dir.path() / "public-as-private.key");
  ASSERT_FALSE(swapped_private.ok());
  EXPECT_NE(swapped_private.error().message().find("\"PUBLIC KEY\" PEM block"), std::string::npos)
      << swapped_private.error().message();
  auto swapped_public = LoadPublicKey(dir.path() / "private-as-public.pub");
  ASSERT_FALSE(swapped_public.ok());
  EXPECT_NE(swapped_public.error().message().find("not a public key"), std::string::npos);

  // Not PEM, damaged DER, two keys in one file, an encrypted key, a directory.
  WriteFile(dir.path() / "text.key", "hello\n");
  EXPECT_NE(LoadPrivateKey(dir.path() / "text.key").error().message().find("no PEM block"),
            std::string::npos);
  std::string damaged = kRfcPrivatePem;
  damaged.replace(damaged.find("MC4C"), 4, "MC8C");  // a wrong outer length
  WriteFile(dir.path() / "damaged.key", damaged);
  EXPECT_NE(LoadPrivateKey(dir.path() / "damaged.key").error().message().find("well-formed"),
            std::string::npos);
  WriteFile(dir.path() / "two.key", std::string(kRfcPrivatePem) + kRfcPrivatePem);
  EXPECT_NE(LoadPrivateKey(dir.path() / "two.key").error().message().find("one key per file"),
            std::string::npos);
  WriteFile(dir.path() / "encrypted.key",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n");
  EXPECT_NE(LoadPrivateKey(dir.path() / "encrypted.key").error().message().find("is encrypted"),
            std::string::npos);
  fs::create_directory(dir.path() / "adir");
  chmod((dir.path() / "adir").c_str(), 0700);
  EXPECT_NE(LoadPrivateKey(dir.path() / "adir").error().message().find("not a regular file"),
            std::string::npos);
  WriteFile(dir.path() / "huge.key", std::string(kMaxKeyFileBytes + 1, 'A'));
  EXPECT_NE(LoadPrivateKey(dir.path() / "huge.key").error().message().find("larger than"),
            std::string::npos);
}

TEST(KeysTest, PublicKeyFileRoundTrip) {
  TempDir dir;
  auto key = GenerateKeyFile(dir.path() / "attest.key");
  ASSERT_TRUE(key.ok());
  std::string pem = PublicKeyPem(*key);
  EXPECT_EQ(pem.rfind("-----BEGIN PUBLIC KEY-----\n", 0), 0u);
  WriteFile(dir.path() / "attest.pub", pem, 0644);  // a public key may be world-readable
  auto loaded = LoadPublicKey(dir.path() / "attest.pub");
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  EXPECT_EQ(loaded->key_id(), key->verifying_key().key_id());
  EXPECT_EQ(loaded->Pem(), pem);
}

// The key ID is what the openssl command line computes, and openssl reads
// our key files.
TEST(KeysTest, KeyIdMatchesOpensslCommandLine) {
  ASSERT_TRUE(RequireCommand("openssl"));
  TempDir dir;
  fs::path key_path = dir.path() / "attest.key";
  fs::path public_path = dir.path() / "attest.pub";
  auto key = GenerateKeyFile(key_path);
  ASSERT_TRUE(key.ok());
  WriteFile(public_path, PublicKeyPem(*key), 0644);

  CommandResult digest =
      RunShell("openssl pkey -pubin -in '" + public_path.string() + "' -outform DER | sha256sum");
  ASSERT_EQ(digest.exit_code, 0) << digest.output;
  EXPECT_EQ(digest.output.substr(0, 64), key->verifying_key().key_id());

  CommandResult derived = RunShell("openssl pkey -in '" + key_path.string() + "' -pubout");
  ASSERT_EQ(derived.exit_code, 0) << derived.output;
  EXPECT_EQ(derived.output, PublicKeyPem(*key));
}

TEST(KeysTest, LoadsAKeyMadeByOpenssl) {
  ASSERT_TRUE(RequireCommand("openssl"));
  TempDir dir;
  fs::path key_path = dir.path() / "openssl.key";
  CommandResult made =
      RunShell("umask 077 && openssl genpkey -algorithm ed25519 -out '" + key_path.string() + "'");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  auto key = LoadPrivateKey(key_path);
  ASSERT_TRUE(key.ok()) << key.error().ToString();
  CommandResult digest =
      RunShell("openssl pkey -in '" + key_path.string() + "' -pubout -outform DER | sha256sum");
  ASSERT_EQ(digest.exit_code, 0) << digest.output;
  EXPECT_EQ(digest.output.substr(0, 64), key->verifying_key().key_id());
}

}  // namespace
}  // namespace plimsoll::attest
