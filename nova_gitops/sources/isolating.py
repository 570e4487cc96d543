"""Runs a program that may open no network socket: how kustomize is cut off from every network.

kustomize fetches remote bases itself: an ``http(s)://`` entry with Go's HTTP client, a git URL by running
``git``. An HTTP(S) proxy that leads nowhere does not stop the first, because Go never sends a request for
``localhost`` or a loopback address through a proxy: ``resources: [http://127.0.0.1:8080/...]`` reaches
whatever listens on the machine (the controller pod's sidecars, a metadata endpoint's forwarder). Our own
checks refuse such entries, but a field they do not know of, or a transformer's configuration that names a
file by URL, would reach kustomize all the same. So kustomize is never run but through this module:

    python -I -S isolating.py PROGRAM ARGUMENT...

installs a seccomp filter and then ``execve``s PROGRAM. The filter makes ``socket(2)`` (and, on x86-64,
every x32 system call, and ``io_uring_setup``, which could open sockets without the ``socket`` call) fail
with ``EACCES``; it is kept by every child and cannot be removed (``PR_SET_NO_NEW_PRIVS`` first, as the
kernel requires of a process without privileges). Without a socket there is no TCP, no UDP, no DNS and no
Unix socket: no HTTP request and no git transport can leave the process, whatever it is asked to fetch.

It is a script run by its own interpreter, not a ``preexec_fn``: the controller has threads, and code run
between ``fork`` and ``exec`` in a threaded process can deadlock. ``-I -S`` keeps the environment and the
site packages out of that interpreter; the script imports only the standard library, so it starts fast.

Where no filter can be installed (not Linux, a machine without seccomp, an architecture not in the table)
the script exits with status ``UNAVAILABLE`` and says why, and PROGRAM is not run: kustomize sources are
built only where kustomize can be kept offline.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

SCRIPT = os.path.abspath(__file__)  # not pathlib: importing it would double this interpreter's start
UNAVAILABLE = 125
"""Exit status when the filter cannot be installed: PROGRAM did not run."""
REFUSAL_PREFIX = "nova-gitops: not run, since it cannot be kept off the network here"

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_EACCES = 13
_X32_SYSCALL_BIT = 0x40000000
_IO_URING_SETUP = 425  # the same number on every 64-bit architecture since Linux 5.1
# machine → (AUDIT_ARCH_*, the number of socket(2))
_ARCHITECTURES = {
    "x86_64": (0xC000003E, 41),
    "aarch64": (0xC00000B7, 198),
    "arm64": (0xC00000B7, 198),
    "riscv64": (0xC00000F3, 198),
}
# classic BPF
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06
_NR_OFFSET, _ARCH_OFFSET = 0, 4  # struct seccomp_data


def command(program: list[str]) -> list[str]:
    """The command line that runs ``program`` (its absolute path first) with no socket."""
    return [sys.executable, "-I", "-S", SCRIPT, *program]


def filter_program(audit_arch: int, socket_number: int) -> bytes:
    """The seccomp filter as ``struct sock_filter[]``: a system call of another architecture, an x32 one,
    ``socket`` and ``io_uring_setup`` fail with EACCES; everything else is allowed."""
    deny = _SECCOMP_RET_ERRNO | _EACCES
    instructions = [
        (_LD_W_ABS, 0, 0, _ARCH_OFFSET),
        (_JEQ_K, 0, 5, audit_arch),  # another architecture: to the denial
        (_LD_W_ABS, 0, 0, _NR_OFFSET),
        (_JGE_K, 3, 0, _X32_SYSCALL_BIT),
        (_JEQ_K, 2, 0, socket_number),
        (_JEQ_K, 1, 0, _IO_URING_SETUP),
        (_RET_K, 0, 0, _SECCOMP_RET_ALLOW),
        (_RET_K, 0, 0, deny),
    ]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in instructions)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def forbid_sockets() -> None:
    """Install the filter on this process (and so on every program it executes); OSError when that
    cannot be done here, with the reason."""
    if not sys.platform.startswith("linux"):
        raise OSError(f"seccomp is a Linux facility, and this is {sys.platform}")
    machine = os.uname().machine
    if machine not in _ARCHITECTURES:
        raise OSError(f"no socket filter is known for the {machine} architecture")
    program = filter_program(*_ARCHITECTURES[machine])
    libc = ctypes.CDLL(None, use_errno=True)
    prctl = libc.prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"PR_SET_NO_NEW_PRIVS: {os.strerror(ctypes.get_errno())}")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"seccomp filter: {os.strerror(ctypes.get_errno())}")


def main(arguments: list[str]) -> int:
    if not arguments:
        sys.stderr.write("usage: isolating.py PROGRAM [ARGUMENT...]\n")
        return 2
    try:
        forbid_sockets()
    except OSError as error:
        sys.stderr.write(f"{REFUSAL_PREFIX} ({error.strerror or error})\n")
        return UNAVAILABLE
    try:
        os.execv(arguments[0], arguments)
    except OSError as error:
        sys.stderr.write(f"cannot run {arguments[0]}: {error.strerror}\n")
        return 126


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
