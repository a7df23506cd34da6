// pe/ layer: the Authenticode image digest (pe/authenticode.hpp); Microsoft "Windows
// Authenticode Portable Executable Signature Format", Calculating the PE Image Hash.
#include "pe/authenticode.hpp"

#include <algorithm>
#include <memory>
#include <numeric>

#include "crypto/crypto.hpp"

namespace modsign::pe {

Result<std::vector<Range>> authenticode_ranges(const PeImage& img) {
  std::vector<Range> r;
  auto add = [&r](std::uint64_t from, std::uint64_t to) {
    if (to > from) r.push_back({from, to - from});
  };
  // Steps 1-7: the headers without CheckSum and without the Certificate Table entry.
  // parse() guarantees checksum_offset + 4 <= certificate entry <= SizeOfHeaders.
  const std::uint64_t headers = img.size_of_headers;
  add(0, img.checksum_offset);
  if (img.certificate_directory_offset) {
    add(img.checksum_offset + 4, *img.certificate_directory_offset);
    add(*img.certificate_directory_offset + 8, headers);
  } else {
    add(img.checksum_offset + 4, headers);
  }
  // Steps 8-13: the sections in file order.
  std::vector<std::size_t> order(img.sections.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&img](std::size_t a, std::size_t b) {
    return img.sections[a].pointer_to_raw_data < img.sections[b].pointer_to_raw_data;
  });
  std::uint64_t sum = headers;
  for (std::size_t i : order) {
    const Section& s = img.sections[i];
    if (s.size_of_raw_data == 0) continue;
    r.push_back({s.pointer_to_raw_data, s.size_of_raw_data});
    sum += s.size_of_raw_data;
  }
  // Step 14: the extra data, FILE_SIZE - (table size + SUM_OF_BYTES_HASHED) bytes at
  // SUM_OF_BYTES_HASHED.
  const std::uint64_t table = img.certificate_table.size;
  if (img.file_size > sum) {
    if (img.file_size < sum + table)
      return make_error(KErr::ebadmsg, "headers and sections (SUM_OF_BYTES_HASHED " + std::to_string(sum) +
                                           ") and the Certificate Table (" + std::to_string(table) +
                                           " bytes) exceed the file size (" + std::to_string(img.file_size) +
                                           " bytes)");
    add(sum, img.file_size - table);
  }
  return r;
}

Result<std::vector<Bytes>> authenticode_digests(const PeImage& img, ByteView file,
                                                const std::vector<crypto::HashAlgo>& algos) {
  auto ranges = authenticode_ranges(img);
  if (!ranges) return ranges.error();
  if (file.size() != img.file_size)
    return make_error(KErr::einval, "the image is " + std::to_string(file.size()) + " bytes, it was parsed as " +
                                        std::to_string(img.file_size));
  std::vector<std::unique_ptr<crypto::Hasher>> hs;
  for (auto a : algos) hs.push_back(std::make_unique<crypto::Hasher>(a));
  // Every hasher takes the same 256 KiB piece in turn, so the piece is read from memory
  // once and hashed from cache by the others.
  constexpr std::uint64_t kPiece = 256 * 1024;
  for (const Range& rg : *ranges) {
    for (std::uint64_t done = 0; done < rg.size; done += kPiece) {
      const ByteView piece = file.subspan(rg.offset + done, std::min(kPiece, rg.size - done));
      for (auto& h : hs) h->update(piece);
    }
  }
  std::vector<Bytes> out;
  for (auto& h : hs) out.push_back(h->final());
  return out;
}

Result<Bytes> authenticode_digest(const PeImage& img, ByteView file, crypto::HashAlgo algo) {
  auto d = authenticode_digests(img, file, {algo});
  if (!d) return d.error();
  return std::move(d->front());
}

}  // namespace modsign::pe
