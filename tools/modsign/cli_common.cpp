// Helpers shared by the modsign subcommands; see cli_common.hpp.
#include "cli_common.hpp"

#include <csignal>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <streambuf>

#include <fcntl.h>
#include <termios.h>
#include <unistd.h>

#include "batch.hpp"

namespace modsign::cli {

namespace {

/// Length of the well-formed UTF-8 sequence that starts at s[i] (Unicode 15, table 3-7:
/// no overlong forms, no surrogates U+D800..U+DFFF, nothing above U+10FFFF), or 0 when
/// the bytes there are not one.  ASCII bytes are sequences of length 1.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // range of the second byte
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if ((c >= 0xe1 && c <= 0xec) || c == 0xee || c == 0xef) n = 3;
  else if (c == 0xed) n = 3, hi = 0x9f;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else if (c == 0xf4) n = 4, hi = 0x8f;
  else return 0;
  if (s.size() - i < n || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  return n;
}

void escape_byte(std::string& out, unsigned char c) {
  static constexpr char d[] = "0123456789abcdef";
  out += "\\x";
  out += d[c >> 4];
  out += d[c & 15];
}

}  // namespace

/// Text safe for a terminal; see cli_common.hpp.
std::string printable(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c < 0x20 || c == 0x7f) {  // C0 controls and DEL
      escape_byte(out, c);
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(in, i);
    if (n == 2 && c == 0xc2 && static_cast<unsigned char>(in[i + 1]) <= 0x9f) {  // C1: U+0080..U+009F
      escape_byte(out, c);
      escape_byte(out, static_cast<unsigned char>(in[i + 1]));
      i += 2;
    } else if (n > 0) {  // ASCII or another well-formed character
      out.append(in, i, n);
      i += n;
    } else if (c <= 0x9f) {  // 0x80..0x9f outside a well-formed sequence: an 8-bit C1 control
      escape_byte(out, c);
      ++i;
    } else {  // any other byte that is not UTF-8 (0xa0..0xff), as it is
      out += static_cast<char>(c);
      ++i;
    }
  }
  return out;
}

void complain(const std::string& file, const std::string& what) {
  const std::string line = "modsign: " + printable(file.empty() ? "" : file + ": ") + printable(what) + "\n";
  if (std::string* sink = complaint_sink()) *sink += line;  // a batch item: printed in input order
  else std::cerr << line;
}

void usage_hint(const std::string& command) {
  std::cerr << "Run 'modsign " << (command.empty() ? "" : command + " ") << "--help' for more information.\n";
}

/// One JSON object per line; invalid UTF-8 (file names, certificate strings) is replaced
/// by U+FFFD instead of aborting the output.
std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

namespace {

/// A passphrase typed at the terminal (see load_signer in cli_common.hpp), of at most 4095
/// bytes; Signer::load wipes it.
std::optional<std::string> prompt_passphrase(const std::string& path) {
  if (!isatty(STDIN_FILENO)) return std::nullopt;
  const int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  const std::string prompt = "Enter pass phrase for " + printable(path) + ":";
  (void)!write(fd, prompt.data(), prompt.size());
  termios old{};
  const bool have_termios = tcgetattr(fd, &old) == 0;
  if (have_termios) {
    termios quiet = old;
    quiet.c_lflag &= static_cast<tcflag_t>(~(ECHO | ECHONL));
    quiet.c_lflag |= ICANON;
    tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  // Reserved once, so that appending never leaves a copy in a freed buffer (the caller's
  // Signer::load keeps it in a crypto::SecretString, which wipes it).
  std::string pass;
  pass.reserve(4096);
  char c;
  while (pass.size() < 4095 && read(fd, &c, 1) == 1 && c != '\n' && c != '\r') pass += c;
  if (have_termios) tcsetattr(fd, TCSAFLUSH, &old);
  (void)!write(fd, "\n", 1);
  close(fd);
  c = 0;
  return pass;
}

}  // namespace

int run_guarded(const std::function<int()>& f, std::string* reason, const std::string& item) {
  // The library's message names the file ("<item>: <reason>"); the record's reason does not.
  auto report = [&](const char* what, int status) {
    complain("", what);
    if (reason) *reason = item.empty() ? std::string(what) : without_path(item, what);
    return status;
  };
  try {
    return f();
  } catch (const UsageError& e) { return report(e.what(), kExitUsage); } catch (const InputError& e) {
    return report(e.what(), kExitInput);
  } catch (const IoError& e) { return report(e.what(), kExitInput); } catch (const std::exception& e) {
    const std::string why = std::string("internal error: ") + e.what();
    complain(item, why);
    if (reason) *reason = why;
    return kExitInput;
  }
}

namespace {
int g_stdout_errno = 0;  ///< the errno of the first failed write to standard output

/// std::cout's buffer: written to descriptor 1 with write(2), so the errno of a failed write
/// is kept where it happens (stdio's FILE keeps only an error flag, and a later call may
/// overwrite errno).  Buffered as stdio buffers standard output: line by line on a
/// terminal, else in blocks of 4 KiB.  After a failure it takes nothing more: std::cout
/// goes bad.
class StdoutBuffer final : public std::streambuf {
 public:
  explicit StdoutBuffer(bool line) : line_(line) { setp(buf_, buf_ + sizeof buf_); }

 protected:
  int_type overflow(int_type c) override {
    if (drain() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
      if (line_ && traits_type::to_char_type(c) == '\n' && drain() != 0) return traits_type::eof();
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const std::streamsize put = std::streambuf::xsputn(s, n);
    if (line_ && put > 0 && std::memchr(s, '\n', static_cast<std::size_t>(put)) != nullptr && drain() != 0) return 0;
    return put;
  }
  int sync() override { return drain(); }

 private:
  int drain() {
    for (const char* p = pbase(); p < pptr() && g_stdout_errno == 0;) {
      const ssize_t n = ::write(STDOUT_FILENO, p, static_cast<std::size_t>(pptr() - p));
      if (n > 0) p += n;
      else if (n < 0 && errno != EINTR) g_stdout_errno = errno;
      else if (n == 0) g_stdout_errno = EIO;
    }
    setp(buf_, buf_ + sizeof buf_);
    return g_stdout_errno == 0 ? 0 : -1;
  }
  bool line_;
  char buf_[4096];
};
}  // namespace

void install_stdout_buffer() {
  // A reader that goes away (`modsign verify -r DIR | head`) is a failed write (EPIPE), which
  // finish_stdout() reports with exit 3, not a SIGPIPE that kills a batch between a
  // temporary file and its rename.
  std::signal(SIGPIPE, SIG_IGN);
  // Never destroyed: std::cout flushes it at exit.
  static auto* buffer = new StdoutBuffer(::isatty(STDOUT_FILENO) == 1);
  std::cout.rdbuf(buffer);
}

bool flush_stdout() {
  std::cout.flush();
  if (g_stdout_errno == 0 && std::cout.good()) return true;
  if (g_stdout_errno == 0) g_stdout_errno = EIO;
  return false;
}

int finish_stdout(int status) {
  if (flush_stdout() && g_stdout_errno == 0) return status;
  complain("stdout", std::strerror(g_stdout_errno));
  return std::max(status, kExitInput);
}

Signer load_signer(const std::string& key, const std::string& cert, const KeyOptions& options) {
  auto signer = Signer::load(key, cert, prompt_passphrase, options);
  for (const auto& n : signer.notes()) complain(key, n);
  return signer;
}

std::string counted(std::uint64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string without_path(const std::string& path, const std::string& message) {
  return message.starts_with(path + ": ") ? message.substr(path.size() + 2) : message;
}

std::optional<modsign::KernelConfig> load_kernel_config(const KernelBuildOptions& k) {
  if (!k.given()) return std::nullopt;
  return k.build.empty() ? read_kernel_config(k.config) : read_kernel_build(k.build);
}

void print_notes(const std::vector<std::string>& notes) {
  for (const auto& n : notes) complain("", n);
}

modsign::KernelProfile public_profile(const std::string& name) {
  auto p = modsign::KernelProfile::parse(name);
  if (!p) throw UsageError("unknown --kernel '" + name + "' (v6.1|v6|v7.0|v7.1|v7.2)");
  return *p;
}

void apply_kernel_lacks(modsign::KernelProfile& profile, const std::vector<std::string>& families) {
  for (const auto& family : families) {
    const bool hash = family == "sm3" || family == "streebog";
    auto lacks = hash ? profile.absent_hashes() : profile.absent_sig_algos();
    lacks.push_back(family);
    if (hash) profile.set_absent_hashes(lacks);
    else profile.set_absent_sig_algos(lacks);
  }
}

void set_waive_option(modsign::KernelProfile& profile, bool on) { profile.set_waive_mldsa_authattrs(on); }

modsign::TrustStore load_trust(const TrustOptions& t, const modsign::KernelProfile& profile) {
  std::vector<std::string> before;
  try {
    auto store = modsign::TrustStore::load({t.keyrings, t.blacklists, t.revoked, t.dbx, t.strict}, profile, &before);
    for (const auto& n : store.notes()) complain("", "note: " + n);
    return store;
  } catch (const std::exception&) {  // the notes gathered before the failure, then the failure (main)
    for (const auto& n : before) complain("", "note: " + n);
    throw;
  }
}

/// "xz (CRC32 check), 12345 bytes stored" for reports.
std::string compression_text(const ModuleImage& m) {
  std::string t(compression_name(m.compression));
  if (m.xz_check) t += " (" + std::string(xz_check_name(*m.xz_check)) + " check)";
  t += ", " + std::to_string(m.stored_size) + " bytes stored";
  if (m.bytes_after_stream)
    t += ", " + std::to_string(m.bytes_after_stream) + " bytes after the " +
         std::string(compression_name(m.compression)) + " stream ignored" +
         (m.signature_after_stream ? " (a module signature there is never checked)" : "");
  return t;
}

nlohmann::json compression_json(const ModuleImage& m) {
  if (m.compression == Compression::none) return nullptr;
  nlohmann::json j{{"format", compression_name(m.compression)}, {"stored_size", m.stored_size}};
  if (m.xz_check) j["xz_check"] = xz_check_name(*m.xz_check);
  j["kernel_can_decompress"] = m.kernel_decompress_problem.empty();
  if (!m.kernel_decompress_problem.empty()) j["kernel_decompress"] = m.kernel_decompress_problem;
  j["bytes_after_stream"] = m.bytes_after_stream;
  j["signature_after_stream"] = m.signature_after_stream;
  return j;
}

std::string ima_hash_option(const std::string& name, const KernelProfile& profile) {
  return ima_hash_setup(name, profile);
}

nlohmann::json blacklisted_hash_record_json(ByteView buf, const std::string& ima_hash) {
  return blacklisted_hash_record_json(ima_buffer_template("blacklisted-hash", buf, ima_hash));
}

nlohmann::json blacklisted_hash_record_json(const TemplateEntry& r) {
  return {{"template", r.name},
          {"event", "blacklisted-hash"},
          {"buf", to_hex(r.fields.at(2).data)},
          {"template_data", to_hex(r.data)},
          {"template_hash_sha1", to_hex(r.sha1)},
          {"template_hash_sha256", to_hex(r.sha256)}};
}

}  // namespace modsign::cli
