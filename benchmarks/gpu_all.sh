#!/usr/bin/env bash
# Every GPU number docs/performance.md quotes, and the GPU tests, in one command on a CUDA machine with
# `pip install -e '.[test]'` done:
#
#     bash benchmarks/gpu_all.sh [OUT_DIR]            # default OUT_DIR: gpu-results
#
# Steps run in the order below, most wanted first; each writes OUT_DIR/<step>.log (JSON reports beside it) and
# appends one line (exit code, seconds, command) to OUT_DIR/summary.txt, which is printed at the end.
# A failing step does not stop the others. Environment:
#   PYTHON         the interpreter of the python steps (default python3)
#   STEP_LIMIT_S   seconds each step may take before it is stopped (default 1800)
#   STEPS          the steps to run, space-separated (default: all, in this order)
#   STAGE_COSTS_ARGS  workload options of the stage-cost bench (default: --n 48 --batch-sizes 1,8,32)
#   EXECUTOR_ARGS  options of bench_executor.py (default: every core of the box; the mixed workload needs MediaPipe)
#   DEVICE         the device of every step that takes `--device` (default cuda); the `env` step names it
#   SCALE          full (default: full-size random-initialised models, the workloads below) or tiny: the throughput
#                  block's same steps with tiny random models, a few 128² images and small batches, so that
#                  `STEPS="env throughput" DEVICE=cpu SCALE=tiny bash benchmarks/gpu_all.sh OUT` rehearses them on a
#                  CPU in a few minutes (tests/test_gpu_all_rehearsal.py runs it); the other steps ignore it
# `STEPS=throughput` (its block below) measures each torch stage against its model, the precisions, OCR on the GPU
# and the end-to-end rate within 8 minutes. `STEPS=ray-gpu` (4 minutes at most) scores the core suite through Ray's
# GPU and CPU pools and through `--cpu-workers` (bench_ray_gpu.py; `--dry-run` there checks it on a CPU).
set -u
scale=${SCALE:-full}
case $scale in
  full) models=--random-init tiny= ;;
  tiny) models="--model-scale tiny" tiny="--model-scale tiny" ;;
  *) echo "SCALE must be full or tiny, not '$scale'" >&2; exit 2 ;;
esac
py=${PYTHON:-python3}
out=${1:-gpu-results}
mkdir -p "$out"
limit=${STEP_LIMIT_S:-1800}
cores=$(nproc)
steps=${STEPS:-"env throughput ray-gpu tests executor stage-costs kernels shadows psc cse pipeline examples"}
device=${DEVICE:-cuda}

# `$(at FULL TINY)`: a throughput workload's value at SCALE (FULL, the GPU run's, at full scale)
at() { if [ "$scale" = tiny ]; then echo "$2"; else echo "$1"; fi; }

step() {
  local name=$1
  shift
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  printf '%-12s rc=%-3s %5ss  %s\n' "$name" "$rc" "$((SECONDS - t0))" "$*" >>"$out/summary.txt"
}

run() {
  case $1 in
    env) step env "$py" -c "import os, platform, sys, torch; d = torch.device(sys.argv[1]); print(platform.platform(), platform.python_version()); print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(d) if d.type == 'cuda' else 'cpu: ' + (platform.processor() or platform.machine())); print('cpus', os.cpu_count())" "$device" ;;
    tests) step tests "$py" -m pytest -q -p no:cacheprovider -m gpu tests/test_pipeline_device.py \
      tests/test_pipeline_determinism.py tests/test_device_preprocess_instances.py tests/test_pixel_prep.py \
      tests/test_cuda_executors.py ;;
    stage-costs) step stage-costs vistar bench --prompts benchmarks/stage_costs.vistar --device "$device" --random-init --size 1024 \
      ${STAGE_COSTS_ARGS:---n 48 --batch-sizes 1,8,32} --json "$out/stage-costs-cuda.json" ;;
    executor) step executor "$py" benchmarks/bench_executor.py ${EXECUTOR_ARGS:---workers $cores} ;;
    kernels) step kernels "$py" benchmarks/bench_kernels.py --repeats 15 ;;
    shadows) step shadows "$py" benchmarks/bench_shadows.py --device "$device" ;;
    psc) step psc "$py" benchmarks/bench_psc.py --triton ;;
    cse) step cse "$py" benchmarks/bench_cse.py --device "$device" --dtype bfloat16 --size 1024 --images 8 ;;
    pipeline) step pipeline "$py" benchmarks/bench_pipeline.py --images 256 --workers 0 4 8 --compute-ms 2 ;;
    examples) step examples vistar bench --prompts examples/prompts.vistar --device "$device" --random-init --n 256 \
      --batch-sizes 1,8,32,64 --json "$out/bench-cuda.json" ;;
    ray-gpu) limit=240 step ray-gpu "$py" benchmarks/bench_ray_gpu.py --device "$device" --n 48 --size 1024 --batch 8 \
      --cpu-workers "$cores" --json "$out/ray-gpu.json" ;;
    throughput*) throughput "$1" ;;
    *) echo "unknown step $1" >>"$out/summary.txt" ;;
  esac
}

# ---- throughput: stage vs model, precision, OCR on the GPU, end to end (docs/performance.md) ----------------------
# `throughput` runs its four steps, each under its own limit (they sum to 8 minutes; STEP_LIMIT_S does not apply);
# `throughput-stages` etc. run one. Full-size random-initialised models where the checkpoints are absent (SCALE=tiny:
# tiny ones, `$(at FULL TINY)` the workload at each scale, 10 minutes a step).
throughput() {
  local limit
  case $1 in
    throughput) for t in stages precision ocr e2e; do throughput "throughput-$t"; done ;;
    throughput-stages) limit=$(at 120 600) step throughput-stages vistar bench --prompts benchmarks/torch_stages.vistar \
      --device "$device" $models --size "$(at 1024 128)" --n "$(at 8 4)" --batch-sizes "$(at 8 2)" --repeats 1 \
      --json "$out/throughput-stages.json" ;;
    throughput-precision) limit=$(at 180 600) step throughput-precision "$py" benchmarks/bench_precision.py --device "$device" \
      --n "$(at 12 6)" --size "$(at 1024 128)" --batch "$(at 8 2)" $tiny --json "$out/throughput-precision.json" ;;
    throughput-ocr) limit=$(at 60 600) step throughput-ocr "$py" benchmarks/bench_ocr_provider.py --device "$device" --n "$(at 8 1)" \
      --batch "$(at 8 2)" --json "$out/throughput-ocr.json" ;;
    throughput-e2e) limit=$(at 120 600) step throughput-e2e "$py" benchmarks/bench_end_to_end.py --device "$device" --n "$(at 32 6)" \
      --size "$(at 1024 128)" --cpu-workers "$(at 4 2)" --batch "$(at 8 2)" $tiny --json "$out/throughput-e2e.json" ;;
    *) echo "unknown step $1" >>"$out/summary.txt" ;;
  esac
}
# ---- end of the throughput block ------------------------------------------------------------------------------

: >"$out/summary.txt"
for s in $steps; do run "$s"; done
cat "$out/summary.txt"
