#!/usr/bin/env python3
"""Solve an MPS file with HiGHS's interior-point solver (single thread, no crossover) and print
JSON: status, objective, iterations, seconds (solve only, model reading excluded).
Used by `cargo xtask bench lp` as the peer; needs `pip install highspy`."""
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
h.run()
seconds = time.perf_counter() - t
info = h.getInfo()
print(json.dumps({
    "solver": "HiGHS " + h.version() if hasattr(h, "version") else "HiGHS",
    "status": h.modelStatusToString(h.getModelStatus()),
    "objective": info.objective_function_value,
    "iterations": info.ipm_iteration_count,
    "seconds": seconds,
}))
