"""neighbor_mpi4py: an mpi4py program written without nbr.

It makes the neighborhood calls a Python application makes through mpi4py, on a
dist-graph communicator with duplicate edges, a self-loop and (from 3 ranks) a rank
without neighbors, on a duplicate of it, and on a non-periodic Cartesian grid:
the buffer-based calls (Neighbor_allgather, _allgatherv, _alltoall, _alltoallv,
_alltoallw and the nonblocking Ineighbor_allgather and _alltoallv) and the pickle-based
neighbor_allgather and neighbor_alltoall, which mpi4py builds from two calls each
(counts, then the v-call). Every received byte is checked against what its source
sent over that edge; rank 0 prints one digest per call kind of what all ranks
received, so that runs can be compared, and the number of neighborhood calls made.

    mpirun -np N python3 neighbor_mpi4py.py [ITERATIONS]

The fixed-size buffer calls leave mpi4py to divide each buffer by the neighbor count, which
gives a count of 0 for the empty buffers of the rank without neighbors. It prints
"neighbor_mpi4py: check OK, C calls" and exits 0, or a line naming the first wrong block
and exits 1.
"""

import hashlib
import random
import sys

from mpi4py import MPI

SENTINEL = 0xEE  # the bytes between blocks, which no call may write


def graph_edges(size):
    """A random directed multigraph on the ranks, the same on every rank: duplicates,
    a self-loop, and rank 0 without edges from 3 ranks on."""
    rng = random.Random(2026)
    first = 1 if size >= 3 else 0
    edges = []
    for u in range(first, size):
        for _ in range(rng.randrange(1, 4)):
            edges.append((u, rng.randrange(first, size)))
    edges += [(first, first), (first, size - 1), (first, size - 1)]
    return edges


def adjacency(edges, rank):
    sources = [u for (u, v) in edges if v == rank]
    destinations = [v for (u, v) in edges if u == rank]
    return sources, destinations


def out_slots(sources, destinations_of, rank):
    """For every in-edge i of rank: the out-slot of its source it left through (the k-th
    edge from s to rank pairs with the k-th from rank's view, as MPI orders duplicates)."""
    seen = {}
    slots = []
    for s in sources:
        k = seen.get(s, 0)
        seen[s] = k + 1
        slots.append([j for j, d in enumerate(destinations_of(s)) if d == rank][k])
    return slots


def block(origin, slot, call, nbytes):
    start = (origin * 131 + slot * 17 + call * 7) % 251
    return bytes((start + k) % 256 for k in range(nbytes))


def vcount(origin, slot, call):
    return (origin + 2 * slot + call) % 5 * 3


class Checker:
    def __init__(self, comm):
        self.comm = comm
        self.calls = 0
        self.errors = []
        self.digests = {}

    def expect(self, what, got, want):
        if bytes(got) != bytes(want) and not self.errors:
            self.errors.append(f"rank {self.comm.rank}: {what}: received {bytes(got)[:16].hex()}..., "
                               f"sent {bytes(want)[:16].hex()}...")

    def digest(self, kind, data):
        self.digests.setdefault(kind, hashlib.sha256()).update(bytes(data))


def packed(blocks, gap):
    """Blocks laid out with `gap` sentinel bytes after each: (buffer, counts, displacements)."""
    buffer = bytearray()
    counts, displs = [], []
    for b in blocks:
        displs.append(len(buffer))
        counts.append(len(b))
        buffer += b + bytes([SENTINEL]) * gap
    return buffer, counts, displs


def run_graph(graph, sources, destinations, slots, check, call, size):
    """One call of each kind on a graph communicator (sources: the in-neighbors, slots: their out-slots)."""
    rank = graph.rank
    indeg = len(sources)
    # allgather and its nonblocking form: every in-neighbor's one block.
    send = block(rank, 0, call, size)
    want = b"".join(block(s, 0, call, size) for s in sources)
    for name, blocking in (("allgather", True), ("ineighbor_allgather", False)):
        recv = bytearray(size * indeg)
        if blocking:
            graph.Neighbor_allgather([send, MPI.BYTE], [recv, MPI.BYTE])
        else:
            graph.Ineighbor_allgather([send, MPI.BYTE], [recv, MPI.BYTE]).Wait()
        check.expect(f"{name} {size} B, call {call}", recv, want)
        check.digest(name, recv)
    # allgatherv: the blocks at displacements with gaps.
    recv, counts, displs = packed([bytes(size)] * indeg, 3)
    recv = bytearray([SENTINEL]) * len(recv)
    graph.Neighbor_allgatherv([send, MPI.BYTE], [recv, counts, displs, MPI.BYTE])
    check.expect(f"allgatherv {size} B, call {call}", recv, packed([block(s, 0, call, size) for s in sources], 3)[0])
    check.digest("allgatherv", recv)
    # alltoall: one block per out-edge.
    send = b"".join(block(rank, j, call, size) for j in range(len(destinations)))
    recv = bytearray(size * indeg)
    graph.Neighbor_alltoall([send, MPI.BYTE], [recv, MPI.BYTE])
    want_blocks = [block(s, j, call, size) for s, j in zip(sources, slots)]
    check.expect(f"alltoall {size} B, call {call}", recv, b"".join(want_blocks))
    check.digest("alltoall", recv)
    # alltoallv, blocking and nonblocking, and alltoallw: counts per edge, gaps between blocks.
    sblocks = [block(rank, j, call, vcount(rank, j, call) * size) for j in range(len(destinations))]
    wanted = packed([block(s, j, call, vcount(s, j, call) * size) for s, j in zip(sources, slots)], 5)[0]
    sbuf, scounts, sdispls = packed(sblocks, 2)
    for name in ("alltoallv", "ineighbor_alltoallv", "alltoallw"):
        rbuf, rcounts, rdispls = packed([bytes(vcount(s, j, call) * size) for s, j in zip(sources, slots)], 5)
        rbuf = bytearray([SENTINEL]) * len(rbuf)
        if name == "alltoallv":
            graph.Neighbor_alltoallv([sbuf, scounts, sdispls, MPI.BYTE], [rbuf, rcounts, rdispls, MPI.BYTE])
        elif name == "ineighbor_alltoallv":
            graph.Ineighbor_alltoallv([sbuf, scounts, sdispls, MPI.BYTE], [rbuf, rcounts, rdispls, MPI.BYTE]).Wait()
        else:
            graph.Neighbor_alltoallw([sbuf, scounts, sdispls, [MPI.BYTE] * len(scounts)],
                                     [rbuf, rcounts, rdispls, [MPI.BYTE] * len(rcounts)])
        check.expect(f"{name} {size} B, call {call}", rbuf, wanted)
        check.digest(name, rbuf)
    # The pickled forms: Python objects, two MPI calls each.
    got = graph.neighbor_allgather((rank, call, size))
    check.expect(f"pickled allgather, call {call}", repr(got).encode(), repr([(s, call, size) for s in sources]).encode())
    got = graph.neighbor_alltoall([(rank, j, call) for j in range(len(destinations))])
    check.expect(f"pickled alltoall, call {call}", repr(got).encode(), repr([(s, j, call) for s, j in zip(sources, slots)]).encode())
    check.digest("pickled", repr(got).encode())
    check.calls += 11  # 7 buffer calls, 2 × 2 for the pickled ones


def run_cartesian(cart, check, call, size):
    """Neighbor_alltoall on a non-periodic grid: blocks from beyond the edge are not written."""
    rank = cart.rank
    neighbors = []
    for dim in range(cart.ndim):
        neighbors += list(cart.Shift(dim, 1))  # (source, destination): the −1 and the +1 neighbor
    send = b"".join(block(rank, j, call, size) for j in range(len(neighbors)))
    recv = bytearray([SENTINEL]) * (size * len(neighbors))
    cart.Neighbor_alltoall([send, MPI.BYTE], [recv, MPI.BYTE])
    want = b""
    for j, n in enumerate(neighbors):  # block j comes from neighbor j, sent through its slot j ^ 1
        want += bytes([SENTINEL]) * size if n == MPI.PROC_NULL else block(n, j ^ 1, call, size)
    check.expect(f"Cartesian alltoall {size} B, call {call}", recv, want)
    check.digest("cartesian alltoall", recv)
    check.calls += 1


def main():
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    world = MPI.COMM_WORLD
    edges = graph_edges(world.size)
    sources, destinations = adjacency(edges, world.rank)
    slots = out_slots(sources, lambda s: adjacency(edges, s)[1], world.rank)
    graph = world.Create_dist_graph_adjacent(sources, destinations, reorder=False)
    dup = graph.Dup()
    cart = world.Create_cart(MPI.Compute_dims(world.size, 2), periods=[False, False], reorder=False)
    check = Checker(world)
    for call in range(iterations):
        for size in (8, 1000):
            run_graph(graph, sources, destinations, slots, check, call, size)
            run_graph(dup, sources, destinations, slots, check, call, size)
            run_cartesian(cart, check, call, size)
    for comm in (cart, dup, graph):
        comm.Free()
    errors = world.gather(check.errors)
    digests = world.gather({k: d.hexdigest() for k, d in sorted(check.digests.items())})
    calls = world.reduce(check.calls)
    failed = False
    if world.rank == 0:
        for kind in sorted(digests[0]):
            combined = hashlib.sha256("".join(d.get(kind, "") for d in digests).encode()).hexdigest()
            print(f"neighbor_mpi4py: {kind}: {combined[:32]}")
        problems = [e for rank_errors in errors for e in rank_errors]
        failed = bool(problems)
        if failed:
            print(f"neighbor_mpi4py: check FAILED: {problems[0]}")
        else:
            print(f"neighbor_mpi4py: check OK, {calls // world.size} calls per rank")
    sys.exit(1 if world.bcast(failed) else 0)


if __name__ == "__main__":
    main()
