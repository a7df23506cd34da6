# One OpenSSL per process (issue 26): decide how Botan is linked, after
# pkg_check_modules(BOTAN ...) and find_package(OpenSSL).
#   MODSIGN_BOTAN_LINK=auto    the shared library, unless it needs a libcrypto other than
#                              OpenSSL's (e.g. libcrypto.so.3 through libtspi.so.1 beside
#                              OpenSSL 4's libcrypto.so.4): then the static archive beside it
#   MODSIGN_BOTAN_LINK=shared  the shared library whatever it needs (a warning if it brings
#                              a second libcrypto)
#   MODSIGN_BOTAN_LINK=static  the static archive
# The static archive is linked with --as-needed for its own dependencies (pkg-config
# --static), so that the libraries of Botan modules modsign never calls (TPM: libtspi) are
# left out.  This decides how libmodsign.so, the CLI, the tests and the benchmarks link; a
# consumer of the installed static libmodsign.a links the Botan its own pkg-config or CMake
# finds (modsign.pc: Requires.private botan-3).  Sets MODSIGN_BOTAN_LINKED (shared|static).
set(MODSIGN_BOTAN_LINK "auto" CACHE STRING "How Botan is linked: auto, shared or static")
set_property(CACHE MODSIGN_BOTAN_LINK PROPERTY STRINGS auto shared static)
if(NOT MODSIGN_BOTAN_LINK MATCHES "^(auto|shared|static)$")
  message(FATAL_ERROR "MODSIGN_BOTAN_LINK=${MODSIGN_BOTAN_LINK}: give auto, shared or static")
endif()

set(_botan_so "")
foreach(_l IN LISTS BOTAN_LINK_LIBRARIES)
  if(_l MATCHES "/libbotan-3\\.so$")
    set(_botan_so "${_l}")
  endif()
endforeach()
set(_botan_a "")
if(_botan_so)
  string(REGEX REPLACE "\\.so$" ".a" _botan_a "${_botan_so}")
  if(NOT EXISTS "${_botan_a}")
    set(_botan_a "")
  endif()
endif()

# The libcrypto soname each side loads: OpenSSL's, and whatever the shared Botan pulls in.
get_filename_component(_ossl_real "${OPENSSL_CRYPTO_LIBRARY}" REALPATH)
string(REGEX MATCH "libcrypto\\.so\\.[0-9]+" _ossl_soname "${_ossl_real}")
set(_botan_other "")
if(_botan_so AND _ossl_soname)
  execute_process(COMMAND ldd "${_botan_so}" OUTPUT_VARIABLE _ldd ERROR_QUIET RESULT_VARIABLE _rc)
  if(_rc EQUAL 0)
    string(REGEX MATCHALL "libcrypto\\.so\\.[0-9]+" _botan_cryptos "${_ldd}")
    list(REMOVE_DUPLICATES _botan_cryptos)
    list(REMOVE_ITEM _botan_cryptos "${_ossl_soname}")
    set(_botan_other "${_botan_cryptos}")
  endif()
endif()

set(MODSIGN_BOTAN_LINKED shared)
if(MODSIGN_BOTAN_LINK STREQUAL "static" OR (MODSIGN_BOTAN_LINK STREQUAL "auto" AND _botan_other AND _botan_a))
  if(NOT _botan_a)
    message(FATAL_ERROR "MODSIGN_BOTAN_LINK=static: no shared libbotan-3.so with a libbotan-3.a beside it "
                        "among pkg-config's libraries (${BOTAN_LINK_LIBRARIES})")
  endif()
  set(_deps ${BOTAN_STATIC_LIBRARIES})
  list(REMOVE_ITEM _deps botan-3)
  list(TRANSFORM _deps PREPEND "-l")
  set_property(TARGET PkgConfig::BOTAN PROPERTY INTERFACE_LINK_LIBRARIES
               "${_botan_a}" "-Wl,--push-state,--as-needed" ${_deps} "-Wl,--pop-state")
  set(MODSIGN_BOTAN_LINKED static)
  if(_botan_other)
    message(STATUS "Botan: ${_botan_a} (static): ${_botan_so} would load ${_botan_other} beside OpenSSL's ${_ossl_soname}")
  endif()
elseif(_botan_other)
  if(MODSIGN_BOTAN_LINK STREQUAL "shared")
    set(_why "MODSIGN_BOTAN_LINK=shared")
  else()
    set(_why "no libbotan-3.a to link instead")
  endif()
  message(WARNING "Botan: ${_botan_so} loads ${_botan_other} beside OpenSSL's ${_ossl_soname}: every modsign "
                  "process will hold two OpenSSLs (${_why}; `modsign --version` names both)")
endif()
