// modsign's own: umbrella for the UEFI signature databases as the kernel reads them
// (security/integrity/platform_certs, Linux 7.2.13):
//   blacklist/efi_parser       efi_parser.c (parse_efi_signature_list, EFI GUIDs)
//   blacklist/keyring_handler  keyring_handler.c (the per-variable, per-type handlers)
//   blacklist/load_uefi        load_uefi.c (which variables are read)
//   blacklist/efi_variable     modsign's own: containers (efivarfs, auth2), writing, merging
#pragma once

#include "blacklist/efi_parser.hpp"
#include "blacklist/efi_variable.hpp"
#include "blacklist/keyring_handler.hpp"
#include "blacklist/load_uefi.hpp"
#include "blacklist/sources.hpp"
#include "cms/kernel.hpp"
