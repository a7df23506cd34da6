// `modsign ima sign`: the security.ima signature of each file (include/modsign/ima_sign.hpp:
// ima_sign_file, write_security_ima), set as the extended attribute, written as FILE.sig,
// or listed in a manifest.  Flags, calls and printing only.
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <modsign/ima_sign.hpp>
#include <modsign/output.hpp>

#include "batch.hpp"
#include "cli_common.hpp"
#include "cmd_ima.hpp"
#include "common/file.hpp"
#include "options.hpp"

namespace modsign::cli {

namespace {

struct ImaSignArgs {
  std::string key, cert, keyid, manifest;
  KeyOptions key_options;
  ImaSignOptions sign;
  bool setxattr = false, sigfile = false, xattr_user = false;
  BatchOptions batch;
  std::vector<std::string> files, dirs;
};

std::string header_text(const ImaSignature& s) {
  char id[9];
  std::snprintf(id, sizeof id, "%08x", s.header.keyid);
  return "v" + std::to_string(s.header.version) + " " + s.hash + " keyid " + id + ", " + s.algorithm + ", " +
         std::to_string(s.value.size()) + " bytes";
}

int cmd_ima_sign(const ImaSignArgs& a) {
  const int outputs = int{a.setxattr} + int{a.sigfile} + int{!a.manifest.empty()};
  if (outputs > 1) {
    complain("", "--setxattr, --sigfile and --manifest exclude each other");
    return kExitUsage;
  }
  ImaSignOptions opt = a.sign;
  if (!a.keyid.empty()) {
    std::uint32_t v = 0;
    bool ok = a.keyid.size() <= 8;
    for (char c : a.keyid) {
      const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                    : std::isxdigit(static_cast<unsigned char>(c))
                        ? std::tolower(static_cast<unsigned char>(c)) - 'a' + 10
                        : -1;
      if (d < 0) ok = false;
      v = (v << 4) | static_cast<std::uint32_t>(d < 0 ? 0 : d);
    }
    if (!ok) {
      complain("", "--keyid: '" + a.keyid + "' is not a 32-bit key id (1 to 8 hex digits)");
      return kExitUsage;
    }
    opt.keyid = v;
  }
  std::size_t dir_error = 0;  // entries under -r DIR not handled (reported)
  int no_inputs = kExitOk;
  const auto found = ima_file_inputs(a.files, a.dirs, a.sigfile, &dir_error, &no_inputs);
  if (!found) return no_inputs;
  const std::vector<BatchInput>& inputs = *found;
  auto signer = load_signer(a.key, a.cert, a.key_options);
  try {
    check_ima_sign_options(signer, opt);
  } catch (const UsageError& e) {
    complain("", std::string("--hash: ") + e.what());
    return kExitUsage;
  } catch (const SignError& e) {
    const bool seed = e.reason() == SignRefusal::backend_needs_seed;
    complain(seed ? a.key : "", seed ? backend_needs_seed_text() : std::string(e.what()));
    return seed ? kExitUsage : kExitInput;
  }
  const std::string xattr = a.xattr_user ? "user.ima" : "security.ima";
  const bool to_manifest = !a.manifest.empty();
  // Every input (device and inode, as stat() sees through links): no output may be one of
  // them (a --manifest naming an input, a FILE.sig that is a link to an input).
  std::map<std::pair<dev_t, ino_t>, std::string> input_ids;
  for (const auto& in : inputs) {
    struct stat st {};
    if (in.not_regular.empty() && ::stat(in.path.c_str(), &st) == 0)
      input_ids.emplace(std::make_pair(st.st_dev, st.st_ino), in.path);
  }
  const auto refuse_input = [&input_ids](const std::string& out) {
    struct stat st {};
    if (::stat(out.c_str(), &st) != 0) return;
    const auto it = input_ids.find({st.st_dev, st.st_ino});
    if (it != input_ids.end())
      throw IoError(out + ": is the same file as the input " + it->second + "; refusing to overwrite it");
  };
  if (to_manifest && a.manifest != "-") {
    refuse_output_over(a.manifest, {{signer.key_path(), "the private key"},
                                    {signer.certificate_path(), "the certificate"},
                                    {a.key_options.pin_file, "the PIN file"}});
    refuse_input(a.manifest);
    // A destination that cannot be written is said before anything is signed, not after
    // the whole tree.
    check_output_file(a.manifest);
  }
  std::vector<std::string> lines(inputs.size());
  BatchOptions bo = a.batch;
  if (to_manifest && a.manifest == "-") bo.quiet = true;  // stdout carries the manifest
  bo.outputs_by_name = a.sigfile;                         // NAME.sig: a link named beside its target gets its own
  const int status = run_file_batch(
      "ima sign", inputs, a.dirs, true, dir_error, bo, [&](std::size_t i, ItemResult& r, const OutputRoute& to) {
        const BatchInput& in = inputs[i];
        ImaSignOptions o = opt;
        o.expect_file = walked_file(in, a.dirs);
        if (a.sigfile) refuse_input(in.path + ".sig");  // another input (the library checks this one, keys, PIN)
        // One open file for the hash and the output (the xattr, or FILE.sig beside it).
        const ImaSignature s = a.sigfile     ? ima_sign_file_sigfile(signer, in.path, o, to)
                               : to_manifest ? ima_sign_file(signer, in.path, o)
                                             : ima_sign_file_xattr(signer, in.path, xattr, o);
        r.bytes = s.file_size;
        std::string where;
        if (a.sigfile) {
          where = " -> " + in.path + ".sig";
        } else if (to_manifest) {
          lines[i] = dump({{"path", in.path},
                           {"xattr", xattr},
                           {"security.ima", to_hex(s.value)},
                           {"size", s.value.size()},
                           {"file_size", s.file_size},
                           {"sha256", to_hex(s.file_sha256)},
                           {"hash", s.hash + ":" + to_hex(s.file_digest)}});
        } else {
          where = " (" + xattr + " set)";
        }
        r.out = printable(in.path) + ": " + header_text(s) + where + "\n";
        return kExitOk;
      });
  if (to_manifest) {
    if (status != kExitOk) {
      complain(a.manifest == "-" ? "--manifest -" : a.manifest, "not written: a file could not be signed");
      return status;
    }
    std::string text;
    for (const auto& l : lines)
      if (!l.empty()) text += l + "\n";
    if (a.manifest == "-") {
      std::cout << text << std::flush;
      return status;
    }
    write_file_atomic(a.manifest, ByteView(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  }
  return status;
}

}  // namespace

void add_ima_sign_command(CLI::App& ima, Commands& subs) {
  auto a = std::make_shared<ImaSignArgs>();
  auto* c = ima.add_subcommand("sign",
                               "sign files: security.ima (type 3, signature_v2_hdr v2/v3) as the kernel appraises it");
  add_signer_options(c, a->key, a->cert, a->key_options.pin_file,
                     "private key (PEM or DER; KBUILD_SIGN_PIN for encrypted keys), or a pkcs11: URI");
  c->get_option("--key")->required();
  c->add_option("--hash", a->sign.hash, "file hash: sha256|sha384|sha512|sha224|sha1|sha3-256|sha3-384|sha3-512")
      ->capture_default_str();
  c->add_flag("--v3", a->sign.v3,
              "RSA/ECDSA: signature version 3 (over struct ima_file_id; appraise_type=sigv3, Linux 7.1+); ML-DSA "
              "keys always sign version 3");
  c->add_option("--keyid", a->keyid, "the header's 32-bit key id (hex) instead of the certificate's SKID tail");
  c->add_flag("--deterministic", a->sign.deterministic,
              "reproducible signatures: deterministic ML-DSA (rnd = 0), ECDSA nonces per RFC 6979");
  c->add_flag("--setxattr", a->setxattr, "set the security.ima extended attribute (the default output)");
  c->add_flag("--sigfile", a->sigfile, "write the value to FILE.sig instead (as evmctl --sigfile)");
  c->add_option("--manifest", a->manifest,
                "write one JSON line per file to OUT instead ('-': stdout): path, xattr, security.ima (hex), size, "
                "file_size, sha256, hash");
  c->add_flag("--xattr-user", a->xattr_user, "use user.ima instead of security.ima (as evmctl --xattr-user)");
  add_backend_option(c, a->sign.backend, "signing");
  add_batch_options(c, a->batch, true, "files");
  add_ima_file_inputs(c, a->files, a->dirs, "files to sign");
  subs.emplace_back(c, [a] { return cmd_ima_sign(*a); });
}

}  // namespace modsign::cli
