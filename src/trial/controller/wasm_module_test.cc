// ReadWasmModule on hand-built modules: what it reads, and that any
// malformed or truncated input is an error, never a crash.
#include "trial/controller/wasm_module.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace plimsoll::trial {
namespace {

using Bytes = std::vector<uint8_t>;

const Bytes kHeader = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};

Bytes Section(uint8_t id, const Bytes& body) {
  Bytes section = {id, static_cast<uint8_t>(body.size())};  // bodies here are < 128 bytes
  section.insert(section.end(), body.begin(), body.end());
  return section;
}

Bytes Name(const std::string& text) {
  Bytes bytes = {static_cast<uint8_t>(text.size())};
  bytes.insert(bytes.end(), text.begin(), text.end());
  return bytes;
}

Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes all;
  for (const Bytes& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// Types: 0 = (f64, i32) -> f64, 1 = () -> i32. One imported function
// env.printf of type 1 when `with_import`; functions of types 0 and 1;
// exports "control" (the first defined function), "memory" and "buffer".
Bytes Module(bool with_import) {
  const Bytes types =
      Section(1, {0x02, 0x60, 0x02, 0x7c, 0x7f, 0x01, 0x7c, 0x60, 0x00, 0x01, 0x7f});
  const Bytes imports =
      with_import ? Section(2, Concat({{0x01}, Name("env"), Name("printf"), {0x00, 0x01}}))
                  : Bytes{};
  const Bytes functions = Section(3, {0x02, 0x00, 0x01});
  const Bytes memory = Section(5, {0x01, 0x00, 0x02});
  const uint8_t first = with_import ? 1 : 0;
  const Bytes exports = Section(7, Concat({{0x03},
                                           Name("control"),
                                           {0x00, first},
                                           Name("memory"),
                                           {0x02, 0x00},
                                           Name("buffer"),
                                           {0x00, static_cast<uint8_t>(first + 1)}}));
  const Bytes code =
      Section(10, {0x02, 0x04, 0x00, 0x20, 0x00, 0x0b, 0x04, 0x00, 0x41, 0x00, 0x0b});
  const Bytes custom = Section(0, Concat({Name("name"), {0x00}}));
  return Concat({kHeader, types, imports, functions, memory, exports, code, custom});
}

TEST(WasmModule, ReadsImportsAndExportedSignatures) {
  Expected<WasmModuleInfo> plain = ReadWasmModule(Module(false));
  ASSERT_TRUE(plain.ok()) << plain.error().message();
  EXPECT_TRUE(plain->imports.empty());
  ASSERT_EQ(plain->exports.size(), 3u);
  const WasmExport* control = plain->FindExport("control");
  ASSERT_NE(control, nullptr);
  EXPECT_EQ(control->kind, WasmExternKind::kFunction);
  EXPECT_EQ(DescribeSignature(control->signature), "(f64, i32) -> (f64)");
  EXPECT_EQ(plain->FindExport("memory")->kind, WasmExternKind::kMemory);
  EXPECT_EQ(DescribeSignature(plain->FindExport("buffer")->signature), "() -> (i32)");
  EXPECT_EQ(plain->FindExport("absent"), nullptr);

  // With an import, exported indices count the imported function first.
  Expected<WasmModuleInfo> importing = ReadWasmModule(Module(true));
  ASSERT_TRUE(importing.ok()) << importing.error().message();
  ASSERT_EQ(importing->imports.size(), 1u);
  EXPECT_EQ(importing->imports[0].module, "env");
  EXPECT_EQ(importing->imports[0].name, "printf");
  EXPECT_EQ(importing->imports[0].kind, WasmExternKind::kFunction);
  EXPECT_EQ(DescribeSignature(importing->FindExport("control")->signature), "(f64, i32) -> (f64)");
}

TEST(WasmModule, AnEmptyModuleHasNothing) {
  Expected<WasmModuleInfo> empty = ReadWasmModule(kHeader);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->imports.empty());
  EXPECT_TRUE(empty->exports.empty());
}

void ExpectRefused(const Bytes& bytes, const std::string& words) {
  Expected<WasmModuleInfo> info = ReadWasmModule(bytes);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(info.error().message().find(words), std::string::npos) << info.error().message();
}

TEST(WasmModule, RefusesWhatIsNotAModule) {
  ExpectRefused({}, "\\0asm");
  ExpectRefused({0x7f, 'E', 'L', 'F', 0x02, 0x01, 0x01, 0x00}, "\\0asm");
  ExpectRefused({0x00, 0x61, 0x73, 0x6d, 0x02, 0x00, 0x00, 0x00}, "version 1");
  // A section longer than the module.
  ExpectRefused(Concat({kHeader, {0x01, 0x10, 0x00}}), "the section list: it ends early");
  // A size over five LEB128 bytes, and one over 32 bits.
  ExpectRefused(Concat({kHeader, {0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}}), "over 5 bytes");
  ExpectRefused(Concat({kHeader, {0x01, 0xff, 0xff, 0xff, 0xff, 0x1f}}), "over 32 bits");
  // Two type sections; an export section before the function section.
  const Bytes types = Section(1, {0x00});
  ExpectRefused(Concat({kHeader, types, types}), "duplicated or out of order");
  ExpectRefused(Concat({kHeader, Section(7, {0x00}), Section(3, {0x00})}), "out of order");
  // A count of entries that cannot fit, a type that is not a function type,
  // bytes left over, an unknown import kind.
  ExpectRefused(Concat({kHeader, Section(1, {0x7f})}), "the type section: it ends early");
  ExpectRefused(Concat({kHeader, Section(1, {0x01, 0x5f, 0x00, 0x00})}), "not a function type");
  ExpectRefused(Concat({kHeader, Section(1, {0x00, 0x00})}), "bytes are left");
  ExpectRefused(Concat({kHeader, Section(2, Concat({{0x01}, Name("a"), Name("b"), {0x09, 0x00}}))}),
                "unknown kind");
  // An export naming a function that does not exist, or whose type does not.
  ExpectRefused(Concat({kHeader, Section(7, Concat({{0x01}, Name("f"), {0x00, 0x05}}))}),
                "\"f\" names no function");
  ExpectRefused(Concat({kHeader, Section(3, {0x01, 0x03}),
                        Section(7, Concat({{0x01}, Name("f"), {0x00, 0x00}}))}),
                "\"f\" has no type");
  // Over the size limit.
  ExpectRefused(Concat({kHeader, Bytes(kMaxWasmModuleBytes, 0)}), "limit");
}

TEST(WasmModule, EveryTruncationIsAnErrorOrAShorterModule) {
  for (bool with_import : {false, true}) {
    const Bytes whole = Module(with_import);
    for (size_t length = 0; length < whole.size(); ++length) {
      const Bytes prefix(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(length));
      Expected<WasmModuleInfo> info = ReadWasmModule(prefix);
      if (info.ok()) {
        // Only a cut between sections reads: as the sections before it.
        EXPECT_LE(info->exports.size(), 3u);
      } else {
        EXPECT_EQ(info.error().code(), ErrorCode::kInvalidArgument);
      }
    }
    // And every single-byte corruption.
    for (size_t at = 8; at < whole.size(); ++at) {
      for (uint8_t value : {uint8_t{0x00}, uint8_t{0x7f}, uint8_t{0x80}, uint8_t{0xff}}) {
        Bytes corrupt = whole;
        corrupt[at] = value;
        (void)ReadWasmModule(corrupt);  // must return; ASan checks every read
      }
    }
  }
}

}  // namespace
}  // namespace plimsoll::trial
