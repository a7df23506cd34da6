// modsign — result and error types shared by every layer and by the public API.
//
// Kernel-visible failures travel as Error{KErr, message} inside Result<T>; I/O failures
// (open, read, write, rename) throw IoError with a message naming the file; unusable
// input to the facade calls (sign.hpp, verdict.hpp) throws InputError, a bad option
// combination UsageError, a failure inside OpenSSL, liblzma, zlib or libzstd LibraryError;
// misuse
// (value() of an error Result) throws std::logic_error.
#pragma once

#include <cerrno>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "modsign/export.hpp"

namespace modsign {

using Bytes = std::vector<std::uint8_t>;
using ByteView = std::span<const std::uint8_t>;

/// The kernel errno values modsign reports.  The numeric values are Linux's
/// (include/uapi/asm-generic/errno*.h); `none` means success.
enum class KErr : int {
  none = 0,
  eperm = EPERM,                // 1
  enoent = ENOENT,              // 2
  eacces = EACCES,              // 13
  enomem = ENOMEM,              // 12
  einval = EINVAL,              // 22
  enodata = ENODATA,            // 61
  enopkg = ENOPKG,              // 65
  ebadmsg = EBADMSG,            // 74
  enokey = ENOKEY,              // 126
  ekeyrejected = EKEYREJECTED,  // 129
  emsgsize = EMSGSIZE,          // 90
  eopnotsupp = EOPNOTSUPP,      // 95: finit_module(MODULE_INIT_COMPRESSED_FILE) without CONFIG_MODULE_DECOMPRESS
  enoexec = ENOEXEC,            // 8: not an image the loader knows (bzImage64_probe)
  elibbad = ELIBBAD,            // 80: a PE image verify_pefile cannot parse
  enosys = ENOSYS,  // 38: a system call the kernel was built without (kexec_file_load, no CONFIG_KEXEC_FILE)
  /// 524, the kernel-internal ENOTSUPP (include/linux/errno.h), which reaches user space
  /// from pefile_strip_sig_wrapper (glibc has no name for it: "Unknown error 524").
  enotsupp = 524,
};

/// Upper-case errno name ("EBADMSG"), or "OK" for KErr::none.
MODSIGN_API std::string_view errno_name(KErr e) noexcept;

/// A failure as the kernel would report it: errno plus a human-readable reason.
struct Error {
  KErr code = KErr::einval;
  std::string message;  ///< for people: rendered, never branched on
  /// What callers branch on beside `code` (kernel errnos say what the kernel does; these
  /// say why modsign itself stopped).  Reason::none for any other failure.
  enum class Reason : std::uint8_t {
    none = 0,
    /// An encrypted private key and no passphrase: ask for one (KBUILD_SIGN_PIN, a prompt).
    needs_passphrase,
    /// Above a bound of modsign's own, not the kernel's: the decompressed size limit
    /// (OpenOptions::max_size, 1 GiB by default) or a zstd window beyond twice that limit.
    over_own_bound,
    /// pkcs7_verify() refused because a signer's certificate (or one its chain reached) is
    /// on the blacklist (EKEYREJECTED "Sig N: signer certificate is blacklisted").
    blacklisted,
    /// The kernel would compute something modsign cannot (a digest its libraries lack):
    /// the kernel's outcome is not predicted.  The code is ENOPKG, which is not the kernel's.
    unpredictable,
  };
  Reason reason = Reason::none;
};

/// Either a value or an Error.  Kernel-visible failures travel in this type;
/// programming errors and I/O failures throw (IoError, std::logic_error).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T v) : v_(std::move(v)) {}      // NOLINT(google-explicit-constructor)
  Result(Error e) : v_(std::move(e)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }
  T& value() & { return check(), std::get<0>(v_); }
  const T& value() const& { return check(), std::get<0>(v_); }
  // On an rvalue Result the value is moved out (returned by value), so that a reference to
  // the value of a temporary Result cannot outlive it.
  T value() && { return check(), std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T operator*() && { return std::move(*this).value(); }
  const Error& error() const& {
    if (ok()) throw std::logic_error("Result::error() on a value");
    return std::get<1>(v_);
  }

 private:
  void check() const {
    if (!ok()) throw std::logic_error("Result::value() on error: " + std::get<1>(v_).message);
  }
  std::variant<T, Error> v_;
};

/// Result for operations with no value.
struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

inline Error make_error(KErr code, std::string msg, Error::Reason reason = Error::Reason::none) {
  return Error{code, std::move(msg), reason};
}

/// An I/O failure (open, read, write, rename).  The message names the file.
class MODSIGN_API IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Input the caller supplied is not usable: a key, certificate or module file that does
/// not hold what was asked for, or an option the operation cannot honour.  The message
/// names the file ("<path>: <reason>") when there is one.
class MODSIGN_API InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A library modsign calls failed where it should not: an OpenSSL without a digest modsign
/// needs, an allocation inside liblzma, zlib, libzstd or OpenSSL, a key OpenSSL could not
/// generate.  Not a property of the input; the CLI reports it as an internal error (exit 3).
/// The message names the call ("EVP_DigestInit_ex: <OpenSSL's reason>", "inflateInit2 failed").
class MODSIGN_API LibraryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Options that cannot be used together or a value outside what an operation takes (a
/// caller's mistake rather than a property of the files; the CLI exits 2 for it).
class MODSIGN_API UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Lower-case hex of `b` ("0a1b...").
MODSIGN_API std::string to_hex(ByteView b);
/// Colon-separated upper-case hex ("0A:1B"), as modinfo prints sig_key.
MODSIGN_API std::string to_colon_hex(ByteView b);
/// Parse hex (either case, no separators); throws std::invalid_argument on bad input.
MODSIGN_API Bytes from_hex(std::string_view hex);

}  // namespace modsign
