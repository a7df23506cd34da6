"""The real-kernel conformance harness behind tools/kernel-conformance (see its docstring)."""
