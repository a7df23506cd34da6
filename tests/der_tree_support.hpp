// A DER tree that the kernel-rule tests edit node by node (test_kernel_mutants.cpp,
// test_kernel_grammar.cpp): constructed elements split into kids, re-encoded with minimal
// definite lengths or, per node, the indefinite form.
#pragma once

#include <vector>

#include "kernel_support.hpp"

namespace modsign::test::kernel_tests {

/// A DER tree to edit messages by node (constructed elements are split into kids).
struct Node {
  std::uint8_t tag = 0;
  Bytes val;
  std::vector<Node> kids;
  bool indef = false;

  static std::vector<Node> parse(ByteView in) {
    std::vector<Node> out;
    for (asn1::Reader r(in, asn1::Rules::ber); !r.empty();) {
      asn1::Element e = r.next();
      Node n;
      n.tag = e.tag;
      if (e.tag & 0x20) n.kids = parse(e.content);
      else n.val.assign(e.content.begin(), e.content.end());
      out.push_back(std::move(n));
    }
    return out;
  }
  Bytes enc() const {
    Bytes c = val;
    if (tag & 0x20)
      for (const auto& k : kids) {
        Bytes b = k.enc();
        c.insert(c.end(), b.begin(), b.end());
      }
    if (indef) {
      Bytes out{tag, 0x80};
      out.insert(out.end(), c.begin(), c.end());
      out.push_back(0);
      out.push_back(0);
      return out;
    }
    return tlv(tag, c);
  }
};

inline Node tree(const Bytes& der) { return Node::parse(der).at(0); }
inline Node& signed_data(Node& ci) { return ci.kids.at(1).kids.at(0); }
inline Node& signer_info(Node& ci) { return signed_data(ci).kids.back().kids.at(0); }

}  // namespace modsign::test::kernel_tests
