#!/usr/bin/env python3
"""Solve an MPS file with HiGHS's interior-point solver (single thread, no crossover) and print
JSON: version, threads (the option as set), status, objective, iterations, seconds (solve only,
model reading excluded) and cpu_per_wall (process CPU time over wall time during the solve).
Used by `cargo xtask bench lp` as the peer; needs highspy (the bench installs it into
target/bench/venv when python3 lacks it)."""
import json
import sys
import time

try:
    import highspy
except ImportError:
    print(json.dumps({"error": "highspy not installed (pip install highspy)"}))
    sys.exit(0)

path = sys.argv[1]
time_limit = float(sys.argv[2]) if len(sys.argv) > 2 else 600.0
h = highspy.Highs()
h.setOptionValue("output_flag", False)
h.setOptionValue("solver", "ipm")
h.setOptionValue("run_crossover", "off")
h.setOptionValue("threads", 1)
h.setOptionValue("parallel", "off")
h.setOptionValue("time_limit", time_limit)
h.readModel(path)
t = time.perf_counter()
c = time.process_time()
h.run()
seconds = time.perf_counter() - t
cpu = time.process_time() - c
info = h.getInfo()
threads = h.getOptionValue("threads")
if isinstance(threads, tuple):  # older highspy: (status, value)
    threads = threads[1]
print(json.dumps({
    "version": h.version() if hasattr(h, "version") else "(unknown version)",
    "threads": threads,
    "status": h.modelStatusToString(h.getModelStatus()),
    "objective": info.objective_function_value,
    "iterations": info.ipm_iteration_count,
    "seconds": seconds,
    "cpu_per_wall": cpu / seconds if seconds > 0 else None,
}))
