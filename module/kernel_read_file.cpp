// mirrors fs/kernel_read_file.c kernel_read_file, Linux 7.2.13
#include "module/kernel_read_file.hpp"

namespace modsign::module {

std::optional<Error> kernel_read_file_refusal(std::uint64_t file_size) {
  // i_size <= 0: -EINVAL, checked before security_kernel_read_file() (IMA) is called.
  if (file_size == 0)
    return make_error(KErr::einval,
                      "the module file is empty (kernel_read_file: EINVAL before IMA's appraisal and the signature "
                      "check)");
  return std::nullopt;
}

}  // namespace modsign::module
