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
