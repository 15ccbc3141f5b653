#!/bin/sh
# Runs a static i386 crosscheck program natively where the kernel runs 32-bit
# binaries (IA32 emulation), else under qemu-i386 (Debian's qemu-user, from
# `make deps-cross`): some virtual machines' kernels refuse them ("Exec format
# error", exit 126), and the cell would fail with no output. The probe is the
# program's own --help, which has no side effect. The bits are the same either
# way: qemu-user runs the same i386 instructions (x87 and SSE2 as compiled).
if "$1" --help >/dev/null 2>&1; then
	exec "$@"
fi
if ! command -v qemu-i386 >/dev/null 2>&1; then
	echo "i386_run: $1: this kernel cannot run i386 programs and qemu-i386 is missing (make deps-cross)" >&2
	exit 126
fi
exec qemu-i386 "$@"
