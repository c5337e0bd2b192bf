#include "trial/controller/wasm_module.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <utility>

namespace plimsoll::trial {
namespace {

constexpr uint32_t kMaxEntries = 100000;
constexpr uint8_t kTypeSection = 1, kImportSection = 2, kFunctionSection = 3, kExportSection = 7;

Error Malformed(std::string_view where, std::string_view what) {
  return Error(ErrorCode::kInvalidArgument,
               "The module is not valid WebAssembly: " + std::string(where) + ": " +
                   std::string(what) + ".");
}

// A cursor over bytes that never reads past its end: every read either
// succeeds or leaves `failed_` set with what was wrong.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> bytes) : bytes_(bytes) {}

  bool AtEnd() const { return offset_ == bytes_.size(); }
  size_t offset() const { return offset_; }
  const std::optional<std::string>& failure() const { return failure_; }

  std::optional<uint8_t> Byte() {
    if (offset_ >= bytes_.size()) return Fail("it ends early");
    return bytes_[offset_++];
  }
  // An unsigned LEB128 of at most 32 bits (5 bytes, the top bits zero).
  std::optional<uint32_t> U32() {
    uint32_t value = 0;
    for (int shift = 0; shift < 35; shift += 7) {
      const std::optional<uint8_t> byte = Byte();
      if (!byte) return std::nullopt;
      if (shift == 28 && (*byte & 0x70) != 0) return Fail("a number is over 32 bits");
      value |= uint32_t{*byte & 0x7fu} << shift;
      if ((*byte & 0x80) == 0) return value;
    }
    return Fail("a number is over 5 bytes");
  }
  // A count of entries, each at least `min_bytes` long, that fit in what
  // is left.
  std::optional<uint32_t> Count(size_t min_bytes) {
    const std::optional<uint32_t> count = U32();
    if (!count) return std::nullopt;
    if (*count > kMaxEntries) return Fail("more than 100000 entries");
    if (uint64_t{*count} * min_bytes > bytes_.size() - offset_) return Fail("it ends early");
    return count;
  }
  std::optional<std::span<const uint8_t>> Bytes(uint32_t length) {
    if (length > bytes_.size() - offset_) return Fail("it ends early");
    const auto span = bytes_.subspan(offset_, length);
    offset_ += length;
    return span;
  }
  std::optional<std::string> Name() {
    const std::optional<uint32_t> length = U32();
    if (!length) return std::nullopt;
    const auto bytes = Bytes(*length);
    if (!bytes) return std::nullopt;
    return std::string(bytes->begin(), bytes->end());
  }
  // Limits: a flag then a minimum and, with flag 1, a maximum.
  bool Limits() {
    const std::optional<uint8_t> flag = Byte();
    if (!flag) return false;
    if (*flag > 1) return Refuse("unknown limits flag");
    if (!U32()) return false;
    return *flag == 0 || U32().has_value();
  }

  // Fail() for a reader answering bool: false.
  bool Refuse(std::string what) {
    Fail(std::move(what));
    return false;
  }

  std::nullopt_t Fail(std::string what) {
    if (!failure_) failure_ = std::move(what);
    offset_ = bytes_.size();  // nothing more is read
    return std::nullopt;
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t offset_ = 0;
  std::optional<std::string> failure_;
};

bool ReadTypes(Reader& in, std::vector<WasmSignature>* types) {
  const std::optional<uint32_t> count = in.Count(3);
  if (!count) return false;
  for (uint32_t i = 0; i < *count; ++i) {
    const std::optional<uint8_t> form = in.Byte();
    if (!form) return false;
    if (*form != 0x60) return in.Refuse("a type is not a function type");
    WasmSignature signature;
    for (auto* list : {&signature.params, &signature.results}) {
      const std::optional<uint32_t> values = in.Count(1);
      if (!values) return false;
      for (uint32_t v = 0; v < *values; ++v) {
        const std::optional<uint8_t> type = in.Byte();
        if (!type) return false;
        list->push_back(*type);
      }
    }
    types->push_back(std::move(signature));
  }
  return true;
}

bool ReadImports(Reader& in, std::vector<WasmImport>* imports,
                 std::vector<uint32_t>* imported_function_types) {
  const std::optional<uint32_t> count = in.Count(4);
  if (!count) return false;
  for (uint32_t i = 0; i < *count; ++i) {
    std::optional<std::string> module = in.Name();
    std::optional<std::string> name = module ? in.Name() : std::nullopt;
    const std::optional<uint8_t> kind = name ? in.Byte() : std::nullopt;
    if (!kind) return false;
    switch (*kind) {
      case 0: {
        const std::optional<uint32_t> type = in.U32();
        if (!type) return false;
        imported_function_types->push_back(*type);
        break;
      }
      case 1:  // table: a reference type, then limits
        if (!in.Byte() || !in.Limits()) return false;
        break;
      case 2:
        if (!in.Limits()) return false;
        break;
      case 3:  // global: a value type and mutability
        if (!in.Byte() || !in.Byte()) return false;
        break;
      default:
        return in.Refuse("an import of unknown kind");
    }
    imports->push_back({std::move(*module), std::move(*name), static_cast<WasmExternKind>(*kind)});
  }
  return true;
}

bool ReadFunctions(Reader& in, std::vector<uint32_t>* function_types) {
  const std::optional<uint32_t> count = in.Count(1);
  if (!count) return false;
  for (uint32_t i = 0; i < *count; ++i) {
    const std::optional<uint32_t> type = in.U32();
    if (!type) return false;
    function_types->push_back(*type);
  }
  return true;
}

bool ReadExports(Reader& in, std::vector<WasmExport>* exports) {
  const std::optional<uint32_t> count = in.Count(3);
  if (!count) return false;
  for (uint32_t i = 0; i < *count; ++i) {
    std::optional<std::string> name = in.Name();
    const std::optional<uint8_t> kind = name ? in.Byte() : std::nullopt;
    const std::optional<uint32_t> index = kind ? in.U32() : std::nullopt;
    if (!index) return false;
    if (*kind > 3) return in.Refuse("an export of unknown kind");
    exports->push_back({std::move(*name), static_cast<WasmExternKind>(*kind), *index, {}});
  }
  return true;
}

// Where a known section must come: by id, except that data count (12) goes
// between element (9) and code (10).
int SectionRank(uint8_t id) {
  return id == 12 ? 10 : (id >= 10 ? id + 1 : id);
}

const char* SectionName(uint8_t id) {
  switch (id) {
    case kTypeSection:
      return "the type section";
    case kImportSection:
      return "the import section";
    case kFunctionSection:
      return "the function section";
    case kExportSection:
      return "the export section";
    default:
      return "a section";
  }
}

}  // namespace

const WasmExport* WasmModuleInfo::FindExport(std::string_view name) const {
  for (const WasmExport& entry : exports) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

Expected<WasmModuleInfo> ReadWasmModule(std::span<const uint8_t> bytes) {
  if (bytes.size() > kMaxWasmModuleBytes) {
    return Error(ErrorCode::kInvalidArgument,
                 "The module is " + std::to_string(bytes.size()) + " bytes, over the " +
                     std::to_string(kMaxWasmModuleBytes) + "-byte limit.");
  }
  static constexpr uint8_t kHeader[] = {0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00};
  if (bytes.size() < sizeof kHeader ||
      !std::equal(kHeader, kHeader + sizeof kHeader, bytes.begin())) {
    return Malformed("the header", "it does not start with \\0asm version 1");
  }
  WasmModuleInfo info;
  std::vector<WasmSignature> types;
  std::vector<uint32_t> imported_function_types, function_types;
  Reader module(bytes.subspan(sizeof kHeader));
  int last_rank = 0;
  while (!module.AtEnd()) {
    const std::optional<uint8_t> id = module.Byte();
    const std::optional<uint32_t> size = id ? module.U32() : std::nullopt;
    const auto body = size ? module.Bytes(*size) : std::nullopt;
    if (!body) return Malformed("the section list", *module.failure());
    if (*id == 0 || *id > 12)
      continue;  // custom sections (names, producers); others we do not read
    if (SectionRank(*id) <= last_rank) {
      return Malformed(SectionName(*id), "it is duplicated or out of order");
    }
    last_rank = SectionRank(*id);
    Reader in(*body);
    bool read = true;
    switch (*id) {
      case kTypeSection:
        read = ReadTypes(in, &types);
        break;
      case kImportSection:
        read = ReadImports(in, &info.imports, &imported_function_types);
        break;
      case kFunctionSection:
        read = ReadFunctions(in, &function_types);
        break;
      case kExportSection:
        read = ReadExports(in, &info.exports);
        break;
      default:
        continue;
    }
    if (read && !in.AtEnd()) in.Fail("bytes are left after its entries");
    if (!read || in.failure())
      return Malformed(SectionName(*id), in.failure().value_or("unreadable"));
  }
  for (WasmExport& entry : info.exports) {
    if (entry.kind != WasmExternKind::kFunction) continue;
    const size_t imported = imported_function_types.size();
    if (entry.index >= imported + function_types.size()) {
      return Malformed("the export section", "\"" + entry.name + "\" names no function");
    }
    const uint32_t type = entry.index < imported ? imported_function_types[entry.index]
                                                 : function_types[entry.index - imported];
    if (type >= types.size()) {
      return Malformed("the function section", "\"" + entry.name + "\" has no type");
    }
    entry.signature = types[type];
  }
  return info;
}

Expected<std::vector<uint8_t>> ReadWasmFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error(ErrorCode::kInvalidArgument, "Cannot open " + path.string() + ".");
  std::vector<uint8_t> bytes;
  char chunk[65536];
  while (bytes.size() <= kMaxWasmModuleBytes && in.read(chunk, sizeof chunk).gcount() > 0) {
    bytes.insert(bytes.end(), chunk, chunk + in.gcount());
  }
  if (in.bad()) return Error(ErrorCode::kInvalidArgument, "Cannot read " + path.string() + ".");
  return bytes;
}

std::string DescribeSignature(const WasmSignature& signature) {
  const auto list = [](const std::vector<WasmValueType>& types) {
    std::string text = "(";
    for (size_t i = 0; i < types.size(); ++i) {
      if (i > 0) text += ", ";
      switch (types[i]) {
        case 0x7f:
          text += "i32";
          break;
        case 0x7e:
          text += "i64";
          break;
        case 0x7d:
          text += "f32";
          break;
        case 0x7c:
          text += "f64";
          break;
        default:
          text += "other";
      }
    }
    return text + ")";
  };
  return list(signature.params) + " -> " + list(signature.results);
}

}  // namespace plimsoll::trial
