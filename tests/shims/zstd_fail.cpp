// A libzstd that cannot make a compression or decompression context (as when malloc fails
// inside it), put before the real one with LD_PRELOAD: test_cli_item_failures.cpp.
extern "C" {
void* ZSTD_createDCtx() { return nullptr; }
void* ZSTD_createCCtx() { return nullptr; }
}
