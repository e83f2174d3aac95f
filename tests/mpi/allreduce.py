#!/usr/bin/python3
"""mpi4py twin of tests/mpi/allreduce.c (sweep mode): Allreduce (SUM of
int64) of MIN, 2*MIN, ... MAX bytes across every rank, every element of
every result checked on every rank.

usage: mpirun ... python3 allreduce.py [--min BYTES] [--max BYTES] [--reps N]
Exit status: 0 every result right, 1 a wrong result, 2 usage error.
No numpy (Debian's mpi4py does not pull it in): buffers are array('q').
"""
import argparse
import sys
import time
from array import array

from mpi4py import MPI

PROG = "mpi-allreduce.py"
# Rank offsets are multiples of a prime above every element value, so a
# sum of P ranks identifies each rank's contribution (as in allreduce.c).
SPREAD = 1000003


def size_arg(text):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    mult = units.get(text[-1:].lower(), 1)
    digits = text[:-1] if mult > 1 else text
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(f"bad size '{text}'")
    value = int(digits) * mult
    if value == 0 or value % 8 or value > 1 << 31:
        raise argparse.ArgumentTypeError(f"size '{text}': a multiple of 8, 8..2g")
    return value


def base_values(n, step):
    """Element i before the reduction, without the rank's offset."""
    return [(i * 2654435761 + step * 97) % SPREAD for i in range(n)]


def allreduce_once(comm, n, step):
    """One allreduce of n int64; the number of wrong elements here."""
    ranks, rank = comm.Get_size(), comm.Get_rank()
    base = base_values(n, step)
    send = array("q", (b + rank * SPREAD for b in base))
    recv = array("q", [-0x5A5A5A5A]) * n  # no stale result can pass
    comm.Allreduce(send, recv, op=MPI.SUM)
    offsets = SPREAD * ranks * (ranks - 1) // 2
    wrong = 0
    for i, b in enumerate(base):
        want = ranks * b + offsets
        if recv[i] != want:
            if wrong < 3:
                print(f"{PROG}: rank {rank}, {8 * n} bytes, step {step}: element {i} "
                      f"is {recv[i]}, expected {want}", file=sys.stderr)
            wrong += 1
    return wrong


def main():
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    parser = argparse.ArgumentParser(prog=PROG)
    parser.add_argument("--min", type=size_arg, default=1024)
    parser.add_argument("--max", type=size_arg, default=64 << 20)
    parser.add_argument("--reps", type=int, default=2)
    args = parser.parse_args()
    if args.min > args.max or args.reps < 1:
        if rank == 0:
            print(f"{PROG}: need MIN <= MAX and REPS >= 1", file=sys.stderr)
        return 2
    hosts = comm.gather(MPI.Get_processor_name(), root=0)
    if rank == 0:
        print("ranks on: " + " ".join(hosts), flush=True)
    size, step, wrong_all, sizes = args.min, 0, 0, 0
    while size <= args.max:
        comm.Barrier()
        t0 = time.monotonic()
        wrong = 0
        for _ in range(args.reps):
            wrong += allreduce_once(comm, size // 8, step)
            step += 1
        ms = (time.monotonic() - t0) * 1e3 / args.reps
        wrong = comm.allreduce(wrong, op=MPI.SUM)
        wrong_all += wrong
        sizes += 1
        if rank == 0:
            print(f"allreduce {size:10d} bytes x {args.reps} on {comm.Get_size()} ranks: "
                  f"{'WRONG' if wrong else 'ok'}, {ms:.3f} ms each (with the check)", flush=True)
        size *= 2
    if rank == 0:
        verdict = "WRONG RESULTS" if wrong_all else "every result right"
        print(f"{PROG}: {sizes} sizes, {args.min}..{args.max} bytes, "
              f"{comm.Get_size()} ranks: {verdict}")
    return 1 if wrong_all else 0


if __name__ == "__main__":
    sys.exit(main())
