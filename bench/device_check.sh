#!/usr/bin/env bash
# The one prepared check for the day a GPU is lent (issue 22): prints ONE JSON object on stdout.
#
#   bench/device_check.sh                  # on the GPU machine: the CUDA-marked tests, `bench train
#                                          #   --device cuda` at batch 32/256/1024 against the vmap
#                                          #   recipe, E7's LM step (bench/bench_lm_step.py) against
#                                          #   the per-model loop and vmap, `reproduce --scale quick
#                                          #   --device cuda`
#   bench/device_check.sh --device cpu     # dry run of the same steps, tiny, on the CPU (no GPU needed)
#
# Every step has its own time limit, so the whole check ends within 6 minutes (340 s of limits) and a
# step that hangs is reported as timed out, not lost. Run from the repository root (PYTHON: the
# interpreter with the project installed or on PYTHONPATH; default python).
set -uo pipefail

DEVICE=cuda
if [[ "${1:-}" == "--device" ]]; then DEVICE="${2:?--device needs cpu or cuda}"; fi
if [[ "$DEVICE" != cuda && "$DEVICE" != cpu ]]; then echo "--device must be cpu or cuda" >&2; exit 2; fi
PY="${PYTHON:-python}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export PYTHONPATH="${PYTHONPATH:-$PWD/src}"
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1  # one BLAS thread per process

# step NAME LIMIT_S COMMAND...: runs COMMAND, stdout to $WORK/NAME.out, stderr's tail kept,
# its exit code and wall seconds to $WORK/NAME.meta
step() {
  local name=$1 limit=$2
  shift 2
  local start=$SECONDS
  timeout "$limit" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
  echo "$? $((SECONDS - start)) $limit" >"$WORK/$name.meta"
}

if [[ "$DEVICE" == cuda ]]; then
  step tests 60 "$PY" -m pytest -q -m cuda -p no:cacheprovider tests/integration/test_device.py \
    tests/unit/test_lm_reference.py
  for batch in 32 256 1024; do
    step "train_$batch" 30 "$PY" -m entropic_bound bench train --student linear_qk --device cuda \
      --batch "$batch" --models 64 --steps 20 --repeats 2 --json
  done
  step lm_step 60 "$PY" bench/bench_lm_step.py --device cuda --rounds 3 --steps 4 --json
  step reproduce 130 "$PY" -m entropic_bound reproduce --scale quick --device cuda \
    --out "$WORK/quick" --quiet --json
else  # the same steps, tiny: the CPU path of the device code and this script's own plumbing
  step tests 60 "$PY" -m pytest -q -p no:cacheprovider tests/integration/test_device.py
  step train_32 30 "$PY" -m entropic_bound bench train --student linear_qk --device cpu \
    --batch 32 --models 4 --n 4 --d 4 --steps 3 --repeats 1 --json
  step lm_step 60 "$PY" bench/bench_lm_step.py --device cpu --shapes recall --rounds 1 --steps 1 --json
  step reproduce 130 "$PY" -m entropic_bound reproduce --only E1 --device cpu --out "$WORK/quick" \
    --quiet --json --set E1.task.r_stars=[2] --set E1.task.spectra=[flat] --set E1.ranks=[1,2] \
    --set E1.task.n=6 --set E1.task.d=3 --set E1.train.steps=20 --set E1.train.n_samples=24
fi

"$PY" - "$WORK" "$DEVICE" <<'EOF'
import json, pathlib, sys

work, device = pathlib.Path(sys.argv[1]), sys.argv[2]
out = {"device": device}
try:
    import torch

    out["torch"] = torch.__version__
    out["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
except Exception as error:  # the report must still come out
    out["torch"] = f"unavailable: {error}"
for meta in sorted(work.glob("*.meta")):
    rc, seconds, limit = map(int, meta.read_text().split())
    name = meta.stem
    text = (work / f"{name}.out").read_text()
    entry = {"rc": rc, "wall_s": seconds, "limit_s": limit, "timed_out": rc == 124}
    if name.startswith("train_") and rc == 0:
        bench = json.loads(text)
        keep = ("ensemble_model_steps_per_s", "vmap_model_steps_per_s", "naive_model_steps_per_s",
                "ratio_vs_vmap", "ratio", "ratios_vs_vmap_per_round", "gemm_peak_gflops")
        entry |= {k: bench[k] for k in keep if k in bench} | {"batch": bench["workload"]["batch"]}
    elif name == "lm_step" and rc == 0:
        keep = ("ratio_vs_unfused", "ratio_vs_per_model", "ratio_vs_vmap", "gemm_peak_gflops")
        entry["shapes"] = {
            shape: {k: r[k] for k in keep} | {"ensemble": r["sides"]["ensemble"]}
            for shape, r in json.loads(text)["shapes"].items()
        }
    elif name == "reproduce" and rc == 0:
        verdicts = json.loads(text)
        entry["verdicts"] = {claim: v["verdict"] for claim, v in verdicts.items()}
    else:
        entry["stdout_tail"] = text[-600:]
    if rc != 0:
        entry["stderr_tail"] = (work / f"{name}.err").read_text()[-1200:]
    out[name] = entry
out["ok"] = all(v.get("rc") == 0 for v in out.values() if isinstance(v, dict))
print(json.dumps(out, indent=1))
EOF
