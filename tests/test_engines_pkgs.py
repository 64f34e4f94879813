"""What each RL engine's venv gets (tests/engine_venvs.py): (resolved packages, ``--no-deps`` packages).

The engine itself goes in with ``--no-deps`` and beside it only what its reward path and RL dataset import
(their full dependency sets pull CUDA builds, flash-attn, vLLM and DeepSpeed, which do not install on a CPU
machine and take many minutes): kept here so the venv key changes when a list does.
"""

# verl 0.9.1: verl/__init__.py and verl/protocol.py import ray, tensordict, torch; the reward manager
# (verl/experimental/reward_loop/reward_manager/naive.py) omegaconf and transformers; the RL dataset
# (verl/utils/dataset/rl_dataset.py) datasets, PIL and, for media, qwen-vl-utils; the reward loop
# (verl/experimental/reward_loop/reward_loop.py) aiohttp. Pins from verl's METADATA.
VERL = (
    ("torch==2.14.1", "torchvision==0.29.1", "transformers>=5.5.3,<5.11,!=5.6.0", "tensordict>=0.8.0,<=0.10.0,!=0.9.0",
     "ray>=2.41.0", "omegaconf", "hydra-core", "codetiming", "pylatexenc", "qwen-vl-utils>=0.0.11", "filelock",
     "aiohttp"),
    ("verl==0.9.1",),
)
# OpenRLHF 0.11.2: openrlhf/utils/agent.py (the executor and its remote reward client) imports aiohttp; the
# package's __init__ (openrlhf/utils/utils.py, math_utils.py) torch, transformers, sympy and pylatexenc.
OPENRLHF = (("torch==2.14.1", "transformers==5.15.0", "aiohttp", "sympy", "pylatexenc"), ("openrlhf==0.11.2",))
# ms-swift 4.6.0: swift/rewards/orm.py imports swift.infer_engine; swift.utils imports torch, transformers,
# modelscope and json_repair at its top; the GRPO reward step (swift/rl_core/) dacite and aiohttp; pins from
# ms-swift's METADATA (datasets < 4.8.5: the light ifpo installs with it).
SWIFT = (("torch==2.14.1", "transformers>=4.33,<5.20", "modelscope>=1.23", "json-repair", "accelerate",
          "peft>=0.11,<0.21", "trl>=0.15,<1.0", "datasets>=4.0,<4.8.5", "dacite", "aiohttp"), ("ms-swift==4.6.0",))
