// Sign a kernel module with an ML-DSA key and predict whether a 7.0 kernel that trusts the
// signer's certificate loads it.
//   sign_and_predict KEY.pem MODULE.ko     (KEY.pem: private key and certificate, e.g. from
//                                           `modsign keygen`; KBUILD_SIGN_PIN if encrypted)
#include <iostream>

#include <modsign/modsign.hpp>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " KEY.pem MODULE.ko\n";
    return 2;
  }
  try {
    const auto signer = modsign::Signer::load(argv[1]);
    const auto report = modsign::sign_module_file(signer, argv[2]);
    std::cout << report.path << ": signed (" << report.algorithm << ", " << report.hash << ", CMS " << report.cms_size
              << " bytes)\n";
    const auto kernel = *modsign::KernelProfile::parse("v7.0");
    const auto trust = modsign::TrustStore::from_certificates({signer.certificate_path()}, kernel);
    const auto verdict = modsign::predict_module_file(report.path, trust, kernel);
    std::cout << kernel.name() << ": " << verdict.outcome;
    if (verdict.err != modsign::KErr::none) std::cout << " (" << modsign::errno_name(verdict.err) << ")";
    std::cout << "\n";
    return verdict.outcome == "loads" ? 0 : 1;
  } catch (const std::exception& e) {  // modsign::IoError, modsign::InputError
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 2;
  }
}
