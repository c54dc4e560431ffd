#!/usr/bin/env bash
# The MPI tests (the CLI's `mpi` feature), run by .ci/run after scripts/install-mpi.sh:
#  1. logistic regression and GURU's batch solver over K = 1, 2, 3 ranks give the single
#     process's objective (1e-9 relative), iteration count (logistic regression ±1, GURU the
#     same) and model (weights to 1e-6 relative), `--json` reports `ranks`, and only rank 0
#     writes the model;
#  2. a binary built without the feature, started by mpirun with 2 ranks, stops with a clear error;
#  3. ranks given different data sets stop with a clear error, not a hang;
#  4. a rank killed mid-fit (SIGKILL inside the Newton iterations): mpirun ends the other ranks
#     and names the dead one, well within the timeout.
# Every mpirun is bounded by `timeout`, so a hang fails the test instead of the CI run.
# Usage: scripts/test-mpi.sh [data set]   (default: usps, digits 3 against 5)
set -euo pipefail
cd "$(dirname "$0")/.."

data="${1:-usps}"
task=(--pair 3,5)
[ "$data" = usps ] || task=()
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# containers: no cross-memory attach between processes
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# one thread per rank: ranks share the machine's cores
export RAYON_NUM_THREADS=1
target="${CARGO_TARGET_DIR:-target}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# the binary without the feature first (what `cargo test` built), kept aside
cargo build -q -p bulwark-cli
cp "$target/debug/bulwark" "$tmp/bulwark-plain"
cargo build -q -p bulwark-cli --features mpi --bin bulwark --example rank_dies
B="$target/debug/bulwark"
# the Rust tests built with the feature (no mpirun): bulwark-mpi's own and the CLI's ranks tests
cargo test -q -p bulwark-mpi --features mpi
cargo test -q -p bulwark-cli --features mpi --test ranks
run_mpi() { timeout 300 mpirun --oversubscribe "$@"; }
passed=0
failed=0
check() { # name, then a command that must succeed
    local name="$1"
    shift
    if "$@"; then
        passed=$((passed + 1))
        echo "test-mpi: $name ... ok"
    else
        failed=$((failed + 1))
        echo "test-mpi: $name ... FAILED"
    fi
}

logreg=(train --algo logreg --data "$data" "${task[@]}" --scale standard --l2 1e-3 --json)
guru=(train --algo guru --solver batch --sigma 1 --bias --data "$data" "${task[@]}" --scale standard --json)
for algo in logreg guru; do
if [ "$algo" = logreg ]; then train=("${logreg[@]}") slack=1; else train=("${guru[@]}") slack=0; fi
mkdir -p "$tmp/$algo"
"$B" "${train[@]}" --out "$tmp/$algo/single.json" > "$tmp/$algo/single.out"
for k in 1 2 3; do
    mkdir -p "$tmp/$algo/k$k"
    # each rank runs in its own directory: only rank 0 may write the model there
    run_mpi -np "$k" sh -c "cd $tmp/$algo/k$k/ && mkdir -p r\$OMPI_COMM_WORLD_RANK && cd r\$OMPI_COMM_WORLD_RANK && exec $PWD/$B ${train[*]} --out model.json" \
        > "$tmp/$algo/k$k.out" 2> "$tmp/$algo/k$k.err" || { cat "$tmp/$algo/k$k.err"; }
    check "$algo over $k rank(s) matches one process" python3 - "$tmp/$algo" "$k" "$slack" <<'PY'
import json, sys, os
tmp, k, slack = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
single = json.load(open(f"{tmp}/single.out"))
dist = json.load(open(f"{tmp}/k{k}.out"))
ok = True
def fail(msg):
    global ok
    ok = False
    print(f"  {msg}")
rel = abs(dist["objective"] - single["objective"]) / abs(single["objective"])
if rel > 1e-9: fail(f"objective {dist['objective']!r} vs {single['objective']!r} (relative {rel:.1e})")
if abs(dist["iterations"] - single["iterations"]) > slack: fail(f"iterations {dist['iterations']} vs {single['iterations']}")
if dist["ranks"] != k: fail(f"ranks {dist['ranks']} (expected {k})")
if k > 1 and dist.get("allreduce_values", 0) <= 0: fail("no allreduce counted")
if dist["training_error"] != single["training_error"]: fail(f"training error {dist['training_error']} vs {single['training_error']}")
m1 = json.load(open(f"{tmp}/single.json"))
mk = json.load(open(f"{tmp}/k{k}/r0/model.json"))
def weights(m):
    return m["weights"] + [m["bias"]]
try:
    w1, wk = weights(m1), weights(mk)
    scale = max(abs(x) for x in w1)
    diff = max(abs(a - b) for a, b in zip(w1, wk))
    if len(w1) != len(wk) or diff > 1e-6 * scale: fail(f"weights differ by {diff:.1e} (scale {scale:.1e})")
except (KeyError, TypeError) as e:
    fail(f"model layout not understood: {e!r}")
others = [d for d in os.listdir(f"{tmp}/k{k}") if d != "r0" and os.path.exists(f"{tmp}/k{k}/{d}/model.json")]
if others: fail(f"ranks other than 0 wrote a model: {others}")
print(f"  K={k}: objective {dist['objective']!r} (relative difference {rel:.1e}), iterations {dist['iterations']}, seconds {dist['seconds']:.3f}, allreduce values {dist.get('allreduce_values', 0):.0f}")
sys.exit(0 if ok else 1)
PY
done
done
train=("${logreg[@]}")

# 2. without the feature, under mpirun: a clear error from each rank, exit status 2
set +e
run_mpi -np 2 "$tmp/bulwark-plain" "${train[@]}" --out "$tmp/plain.json" > /dev/null 2> "$tmp/plain.err"
status=$?
set -e
check "a binary without the feature refuses 2 ranks" \
    sh -c "[ $status -ne 0 ] && [ $status -ne 124 ] && grep -q 'built without the .mpi. feature' '$tmp/plain.err'"

# 3. ranks given different data sets: every rank stops with an error naming the data
set +e
run_mpi -np 1 "$B" train --algo logreg --data wdbc --out "$tmp/d.json" : \
    -np 1 "$B" train --algo logreg --data spambase --out "$tmp/d.json" > /dev/null 2> "$tmp/diff.err"
status=$?
set -e
check "ranks given different data stop with a clear error" \
    sh -c "[ $status -ne 0 ] && [ $status -ne 124 ] && grep -q 'disagree on the training data' '$tmp/diff.err' && [ ! -e '$tmp/d.json' ]"

# 4. rank 1 kills itself (SIGKILL) at its reduction 40 (a Newton iteration of the fit; the launch
# checks and the label counts make fewer than 10); rank 0 waits in that reduction until mpirun,
# seeing a rank die, ends it. Bounded by 120 s; it takes a few seconds.
set +e
t0=$(date +%s)
timeout 120 mpirun --oversubscribe -np 2 "$target/debug/examples/rank_dies" 1 40 "${train[@]}" \
    --out "$tmp/killed.json" > "$tmp/killed.out" 2> "$tmp/killed.err"
status=$?
seconds=$(($(date +%s) - t0))
set -e
echo "  killed rank: exit status $status after $seconds s"
before=$failed
check "a rank killed mid-fit ends the run with a clear error" \
    sh -c "[ $status -ne 0 ] && [ $status -ne 124 ] && grep -q 'rank 1 .*signal 9' '$tmp/killed.err' && [ ! -e '$tmp/killed.json' ] && [ ! -s '$tmp/killed.out' ]"
[ "$failed" -eq "$before" ] || sed 's/^/  /' "$tmp/killed.err"

echo "test-mpi: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
