// Strict UTF-8 validation (RFC 3629): rejects overlong forms, surrogates
// (U+D800..U+DFFF), code points above U+10FFFF, stray continuation bytes and
// truncated sequences. NUL is valid UTF-8.
#ifndef PLIMSOLL_BASE_UTF8_H_
#define PLIMSOLL_BASE_UTF8_H_

#include <string_view>

namespace plimsoll::base {

bool IsValidUtf8(std::string_view bytes);

}  // namespace plimsoll::base

#endif  // PLIMSOLL_BASE_UTF8_H_
