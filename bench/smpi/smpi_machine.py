#!/usr/bin/env python3
"""Writes simulator/machines/smpi-fat-tree-32c.json: the nbr machine model of the SimGrid SMPI
platform bench/smpi/fat-tree-32c.xml with the project's SMPI settings (bench/smpi/run.sh).

SimGrid 3.32's SMPI network model gives a message of s bytes the time
f_lat(s) * (sum of route latencies) + s / (f_bw(s) * bandwidth), where f_lat and f_bw are the
piecewise factors `smpi/lat-factor` and `smpi/bw-factor` (defaults below, as compiled into
libsimgrid 3.32), and the node link's capacity is consumed at the same scaled rate, so the
NIC's per-byte time is the class's (nbrc simulate takes the larger of the two). Below 257
bytes SimGrid's bandwidth factor is 0 (no bandwidth term); the measured byte time there is
negligible and set to 0. Routes: a node's loopback (0.3 us, 20 GB/s, not shared) within a node,
2 links of 1 us within a leaf switch (16 nodes), 4 links across the spine.
"""
import json
import sys

LAT = [(0, 2.01467), (257, 1.95341), (732, 1.9503), (1426, 1.61075), (3484, 1.88101), (5776, 2.18796),
       (9376, 2.59299), (15424, 3.48845), (65472, 11.6436)]
BW = dict([(0, 0.0), (257, 0.338112), (732, 0.341987), (1426, 0.608902), (3484, 0.77493), (5776, 1.08739),
           (9376, 0.58729), (15424, 0.697866), (65472, 0.940694)])
SEND_OVERHEAD_US = 0.5  # NBR_SMPI_OS default of bench/smpi/run.sh (smpi/ois)
# smpi/or is set too, but SMPI 3.32 charges it only in blocking receives and MPI_Wait, not in the
# MPI_Waitany that libnbr's SMPI build completes with: 24 exchanges cost 24 x 0.5 us (measured).
RECV_OVERHEAD_US = 0.0


def link(route_latency_us, bandwidth_gbps):
    segments = []
    for start, f_lat in LAT:
        f_bw = BW[start]
        segments.append({"from_bytes": start, "latency_us": round(f_lat * route_latency_us, 6),
                         "byte_time_ns": round(1.0 / (f_bw * bandwidth_gbps), 6) if f_bw > 0 else 0.0})
    first = segments[0]
    return {"latency_us": first["latency_us"], "send_overhead_us": SEND_OVERHEAD_US, "recv_overhead_us": RECV_OVERHEAD_US,
            "gap_us": 0.0, "byte_time_ns": first["byte_time_ns"], "segments": segments[1:]}


machine = {
    "format_version": 1,
    "name": "smpi-fat-tree-32c",
    "description": "SimGrid 3.32 SMPI on bench/smpi/fat-tree-32c.xml with bench/smpi/run.sh's settings: "
                   "128 nodes x 32 cores, EDR-like links (12.5 GB/s, 1 us), two-level fat tree of 16-node "
                   "leaves, 0.5 us per send (receives are not charged under MPI_Waitany), no copy cost (simulate-computation:no)",
    "ranks_per_node": 32,
    "ranks_per_socket": 32,
    "copy_ns_per_byte": 0.0,
    "socket": link(0.3, 20.0),
    "node": link(0.3, 20.0),
    "leaf": link(2.0, 12.5),
    "network": link(4.0, 12.5),
    "nodes_per_switch": 16,
    "nic": {"gap_us": 0.0, "byte_time_ns": 0.08},
    "sources": [
        "bench/smpi/fat-tree-32c.xml: link 12.5 GBps / 1 us, loopback 20 GBps / 0.3 us, fat tree 2;16,8;1,8;1,1",
        "bench/smpi/run.sh: smpi/os = smpi/ois = smpi/or = 0.5 us, of which SMPI charges only the send side under MPI_Waitany (measured); common.sh: send-is-detached-thresh:0 "
        "(no eager buffering)",
        "SimGrid 3.32 defaults smpi/lat-factor and smpi/bw-factor (strings in libsimgrid.so.3.32), checked "
        "with SMPI ping-pongs on the platform (same node, same leaf, across leaves; 4 B to 1 MiB): "
        "bench/smpi/smpi_machine.py",
        "A node's outgoing and incoming links are shared at the scaled rate (16 concurrent 64 KiB and 1 KiB "
        "flows between two nodes take 16x one flow's transfer time); the loopback is not shared",
    ],
}
json.dump(machine, sys.stdout, indent=2)
sys.stdout.write("\n")
