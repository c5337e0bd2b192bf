#include "wire/json_writer.h"

#include <cmath>

#include "base/utf8.h"
#include "wire/base64.h"

namespace plimsoll::wire {

OrderedJson WriteBytes(std::string_view bytes) {
  if (base::IsValidUtf8(bytes)) return OrderedJson(std::string(bytes));
  OrderedJson object = OrderedJson::object();
  object["base64"] = EncodeBase64(bytes);
  return object;
}

OrderedJson WriteFloat(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return value;
}

std::string Dump(const OrderedJson& value) {
  return value.dump(-1, ' ', /*ensure_ascii=*/false, OrderedJson::error_handler_t::replace);
}

}  // namespace plimsoll::wire
