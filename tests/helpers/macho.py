#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
"""Read a Mach-O executable's header and load commands, for tests/macos.sh.

No tool of Apple's is on a Linux machine, so this reads what the test
asks of a cross-built dsroute straight from the file (the layouts of
<mach-o/loader.h> and <mach-o/nlist.h>, 64-bit little-endian only):
its CPU and file type, the libraries it loads, whether it carries a
code signature, the oldest macOS it is built for, and the symbols it
imports (the undefined external symbols of its symbol table, which the
dynamic linker binds from the libraries it loads).  It prints one fact
a line:

    cpu arm64
    filetype execute
    dylib /usr/lib/libSystem.B.dylib
    signed yes
    minos 11.0
    import _kqueue

and exits 2 on a file that is not such a Mach-O file.
"""

import struct
import sys

MH_MAGIC_64 = 0xFEEDFACF
CPUS = {0x0100000C: "arm64", 0x01000007: "x86_64"}
FILETYPES = {1: "object", 2: "execute", 6: "dylib", 8: "bundle"}
LC_REQ_DYLD = 0x80000000
LC_SYMTAB = 0x2
LC_LOAD_DYLIB = 0xC
LC_LOAD_WEAK_DYLIB = 0x18 | LC_REQ_DYLD
LC_REEXPORT_DYLIB = 0x1F | LC_REQ_DYLD
LC_LAZY_LOAD_DYLIB = 0x20
LC_LOAD_UPWARD_DYLIB = 0x23 | LC_REQ_DYLD
LC_CODE_SIGNATURE = 0x1D
LC_BUILD_VERSION = 0x32
LC_VERSION_MIN_MACOSX = 0x24
DYLIB_COMMANDS = (LC_LOAD_DYLIB, LC_LOAD_WEAK_DYLIB, LC_REEXPORT_DYLIB,
                  LC_LAZY_LOAD_DYLIB, LC_LOAD_UPWARD_DYLIB)
N_STAB = 0xE0
N_TYPE = 0x0E
N_EXT = 0x01
N_UNDF = 0x0


def fail(msg):
    print("macho.py: " + msg, file=sys.stderr)
    sys.exit(2)


def version(v):
    """A packed X.Y.Z version, as LC_BUILD_VERSION has it."""
    s = "%d.%d" % (v >> 16, (v >> 8) & 0xFF)
    return s + (".%d" % (v & 0xFF) if v & 0xFF else "")


def cstring(data, at):
    end = data.find(b"\0", at)
    if end == -1:
        fail("a name runs past the end of the file")
    return data[at:end].decode("utf-8", "replace")


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 32:
        fail("%s: too short for a Mach-O header" % path)
    magic, cpu, _sub, ftype, ncmds, sizeofcmds, _flags, _res = \
        struct.unpack_from("<IiiIIIII", data, 0)
    if magic != MH_MAGIC_64:
        fail("%s: not a 64-bit little-endian Mach-O file (magic %#x)"
             % (path, magic))
    facts = ["cpu " + CPUS.get(cpu & 0xFFFFFFFF, "%#x" % cpu),
             "filetype " + FILETYPES.get(ftype, "%#x" % ftype)]
    signed = False
    symtab = None
    at = 32
    if 32 + sizeofcmds > len(data):
        fail("%s: the load commands run past the end of the file" % path)
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        if size < 8 or at + size > 32 + sizeofcmds:
            fail("%s: a load command of %d bytes" % (path, size))
        if cmd in DYLIB_COMMANDS:
            (name_off,) = struct.unpack_from("<I", data, at + 8)
            facts.append("dylib " + cstring(data, at + name_off))
        elif cmd == LC_CODE_SIGNATURE:
            signed = True
        elif cmd == LC_BUILD_VERSION:
            _platform, minos = struct.unpack_from("<II", data, at + 8)
            facts.append("minos " + version(minos))
        elif cmd == LC_VERSION_MIN_MACOSX:
            (minos,) = struct.unpack_from("<I", data, at + 8)
            facts.append("minos " + version(minos))
        elif cmd == LC_SYMTAB:
            symtab = struct.unpack_from("<IIII", data, at + 8)
        at += size
    facts.append("signed " + ("yes" if signed else "no"))
    if symtab is not None:
        symoff, nsyms, stroff, strsize = symtab
        if symoff + 16 * nsyms > len(data) or stroff + strsize > len(data):
            fail("%s: the symbol table runs past the end of the file"
                 % path)
        for i in range(nsyms):
            strx, ntype, _sect, _desc, _value = \
                struct.unpack_from("<IBBHQ", data, symoff + 16 * i)
            if ntype & N_STAB or not ntype & N_EXT:
                continue
            if ntype & N_TYPE != N_UNDF or strx >= strsize:
                continue
            facts.append("import " + cstring(data, stroff + strx))
    return facts


def main():
    if len(sys.argv) != 2:
        print("usage: macho.py FILE", file=sys.stderr)
        sys.exit(2)
    for fact in read(sys.argv[1]):
        print(fact)


if __name__ == "__main__":
    main()
