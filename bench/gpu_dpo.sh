#!/usr/bin/env bash
# DPO throughput on one GPU: steps/s, tokens/s, MFU and peak GPU memory for Qwen3-VL-2B and -8B shapes.
#
#   bash bench/gpu_dpo.sh                 # both sizes, precompute + shared prompt (the defaults); 8B also
#                                         # without the shared prompt, and with neither (TRL's own passes)
#   SIZES="8b" STEPS=20 bash bench/gpu_dpo.sh
#
# The models are randomly initialised from bench/configs/qwen3vl_{2b,8b}.json (the released shapes), so
# nothing is downloaded; the recipes are the bf16 ones (recipes/qwen3vl{2b,8b}.yaml: LoRA r=16, gradient
# checkpointing, batch 1). Pairs are the bundled sample pairs with media scaled up to realistic token
# counts: every frame of the 3-4 s sample clips (8 fps, 24-32 frames) at about 720x405 pixels (285 tokens
# per frame pair, about 4k vision tokens per video, close to VCIFBench's 720p/0.5 fps average of 6.5k
# input tokens) and images at 960x960 (900 tokens). Results: $OUT/<size>/run_manifest.json, summarised
# by bench/dpo_gpu_report.py into $OUT/summary.json.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
if [[ -f .venv/bin/activate ]]; then . .venv/bin/activate; fi
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
python -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'bench/gpu_dpo.sh needs a CUDA GPU')"

OUT="${OUT:-runs/bench-gpu}"
STEPS="${STEPS:-12}"
SIZES="${SIZES:-2b 8b}"
mkdir -p "$OUT"

common=(
  --pairs sample --max_pairs "${PAIRS:-32}" --eval_pairs null
  --max_steps "$STEPS" --per_device_train_batch_size 1 --gradient_accumulation_steps 1
  --logging_steps 1 --save_strategy no --report_to none --dataloader_num_workers 2
  --eval_hook null  # a speed bench: no checkpoint evaluation
  --attn_implementation "${ATTN:-sdpa}"
  --video_fps 8 --video_min_frames 4 --video_max_frames 64
  --video_min_pixels 291600 --video_max_pixels 291600 --video_max_side 1280
  --image_min_pixels 921600 --image_max_pixels 921600
  --max_length 16384 --overlong drop
)

runs=()
for size in $SIZES; do
  name="$size"
  python train/dpo.py "recipes/qwen3vl${size}.yaml" \
    --model_name_or_path "random:bench/configs/qwen3vl_${size}.json" \
    --output_dir "$OUT/$name" "${common[@]}"
  runs+=("$OUT/$name")
  if [[ "$size" == "8b" && "${NO_SHARED_ROW:-1}" == "1" ]]; then
    # The shared-prompt row's baseline: each pair's prompt and media run twice (chosen, rejected rows).
    name="${size}-no-shared"
    python train/dpo.py "recipes/qwen3vl${size}.yaml" \
      --model_name_or_path "random:bench/configs/qwen3vl_${size}.json" \
      --output_dir "$OUT/$name" "${common[@]}" --shared_prompt false
    runs+=("$OUT/$name")
  fi
  if [[ "$size" == "8b" && "${NO_PRECOMPUTE_ROW:-1}" == "1" ]]; then
    name="${size}-no-precompute"
    python train/dpo.py "recipes/qwen3vl${size}.yaml" \
      --model_name_or_path "random:bench/configs/qwen3vl_${size}.json" \
      --output_dir "$OUT/$name" "${common[@]}" --precompute_ref_log_probs false --shared_prompt false
    runs+=("$OUT/$name")
  fi
done
python bench/dpo_gpu_report.py "${runs[@]}" --json "$OUT/summary.json"
