"""Run inside the verl venv (tests/test_engines.py): verl's own code reads ifpo's export and scores through
ifpo's compute_score. Prints one JSON object.

argv: TOKENIZER_DIR PARQUET COMPLETIONS_JSON CACHE_DIR
- verl.utils.dataset.rl_dataset.RLHFDataset reads the parquet with the processor (overlong-prompt filter on:
  it applies the chat template and qwen-vl-utils reads the media);
- verl.experimental.reward_loop.RewardLoopWorker (the class verl runs as a Ray actor; here in-process) loads
  the custom reward function from its config and scores a DataProto batch built from the dataset's rows
  and the tokenized completions, through the naive reward manager.
"""

import json
import sys

import numpy as np
import torch
from omegaconf import OmegaConf
from transformers import AutoProcessor, AutoTokenizer
from verl import DataProto
from verl.experimental.reward_loop import RewardLoopWorker
from verl.utils.dataset.rl_dataset import RLHFDataset

tokenizer_dir, parquet, completions_path, cache_dir = sys.argv[1:5]
completions = json.loads(open(completions_path).read())  # item id -> [completion, ...]
tokenizer = AutoTokenizer.from_pretrained(tokenizer_dir)
processor = AutoProcessor.from_pretrained(tokenizer_dir)

data_config = OmegaConf.create({"prompt_key": "prompt", "image_key": "images", "video_key": "videos",
                                "max_prompt_length": 100000, "filter_overlong_prompts": True,
                                "filter_overlong_prompts_workers": 1, "cache_dir": cache_dir,
                                "return_raw_chat": True})
dataset = RLHFDataset(parquet, tokenizer, data_config, processor=processor)
rows = [dataset[i] for i in range(len(dataset))]
media_parts = sum(1 for r in rows for m in r["raw_prompt"] for p in (m["content"] if isinstance(m["content"], list)
                                                                      else []) if p.get("type") in ("image", "video"))

config = OmegaConf.create({
    "actor_rollout_ref": {"model": {"path": tokenizer_dir, "tokenizer_path": tokenizer_dir}},
    "reward": {
        "custom_reward_function": {"path": "pkg://ifpo.verifiers.plugins.ifpo_verl", "name": "compute_score",
                                   "reward_kwargs": {"rewards": ["cpr", "ipr", "tcsr"]}},
        "reward_manager": {"source": "register", "name": "naive"},
        "reward_model": {"enable": False},
    },
})
worker = RewardLoopWorker(config)

samples, meta = [], []
for row in rows:
    item_id = row["extra_info"]["item_id"]
    for text in completions.get(item_id, []):
        samples.append((row, text))
prompt_len = 8
response_len = max(len(tokenizer(t, add_special_tokens=False)["input_ids"]) for _, t in samples) + 1
prompts = torch.full((len(samples), prompt_len), tokenizer.pad_token_id or 0, dtype=torch.long)
responses = torch.full((len(samples), response_len), tokenizer.pad_token_id or 0, dtype=torch.long)
mask = torch.zeros((len(samples), prompt_len + response_len), dtype=torch.long)
mask[:, :prompt_len] = 1
decoded = []
for i, (_, text) in enumerate(samples):
    ids = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
    responses[i, : len(ids)] = torch.tensor(ids)
    mask[i, prompt_len: prompt_len + len(ids)] = 1
    decoded.append(tokenizer.decode(ids, skip_special_tokens=True))  # what naive.py hands compute_score
non_tensors = {
    "data_source": np.array([r["data_source"] for r, _ in samples], dtype=object),
    "reward_model": np.array([r["reward_model"] for r, _ in samples], dtype=object),
    "extra_info": np.array([dict(r["extra_info"]) for r, _ in samples], dtype=object),
}
batch = DataProto.from_dict(tensors={"prompts": prompts, "responses": responses, "attention_mask": mask},
                            non_tensors=non_tensors)
outputs = worker.loop.run_until_complete(worker.compute_score_batch(batch))
print(json.dumps({
    "dataset_rows": len(dataset), "media_parts": media_parts,
    "ground_truth_is_item": all(json.loads(r["reward_model"]["ground_truth"])["id"] == r["extra_info"]["item_id"]
                                for r in rows),
    "scored": [{"item_id": r["extra_info"]["item_id"], "solution_str": d, "reward_score": o["reward_score"],
                "extra": o["reward_extra_info"]} for (r, _), d, o in zip(samples, decoded, outputs)],
}))
