"""The benchmarks' harness: every benchmark in bench/ and tools/chaos.py is built on it.

- `processes`: the processes a benchmark starts and always stops (`Harness`: private
  Valkeys and Valkey Clusters, nodes, baseline servers) and `run_bench`;
- `workers`: worker processes driven over pipes (`Workers`) and the pacing of moves;
- `clients`: light raw-websocket clients of a node (racers, spectators) and their pools
  in worker processes (`LoadGenerator`, `SpectatorPool`);
- `race`: one race of the project's client played to its end (`finished_race`), for
  what a finished race leaves behind;
- `measure`: CPU, memory and waits from /proc, a node's /metrics, Valkey's own counters;
- `profiling`: py-spy of a process over a window;
- `report`: which code ran, tables, percentiles, the shared command-line options.
"""
