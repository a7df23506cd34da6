// modsign — symbol visibility of the public API.
//
// The library is compiled with -fvisibility=hidden; only declarations marked MODSIGN_API
// (the public headers under include/modsign/) are exported from libmodsign.so.0.  The
// static archive carries the same objects; linking it needs no definition.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define MODSIGN_API __attribute__((visibility("default")))
#else
#define MODSIGN_API
#endif

namespace modsign::detail {
/// The library's own access to a handle's insides (its Impl and the constructor from one),
/// defined in api/internal.hpp; not part of the API and never exported.
struct Access;
}  // namespace modsign::detail
