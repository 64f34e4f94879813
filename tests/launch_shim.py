"""Launch a training script on N CPU processes with an accelerate config's *real* backend (tests only).

    python tests/launch_shim.py --config_file accelerate_configs/fsdp2.yaml --num_processes 2 \\
        train/dpo.py recipes/tiny.yaml --output_dir /tmp/run ...

``accelerate launch --cpu`` (or ``use_cpu: true``) turns an FSDP or DeepSpeed config into plain
multi-CPU DDP without a word, and without ``--cpu`` accelerate finds no accelerator on a CPU machine and
runs each process alone. This shim keeps accelerate's own launcher (``accelerate.commands.launch``: the
config is read, validated and turned into the ``FSDP_*`` / ``ACCELERATE_DEEPSPEED_*`` environment by
accelerate itself, and torchrun starts the processes), and only changes what a CPU machine lacks:

- in each process, accelerate's backend choice (``PartialState._prepare_backend``) answers gloo with the
  multi-device type, so ``AcceleratorState`` keeps the FSDP / DeepSpeed distributed type of the config;
- the device is the CPU (``ACCELERATE_TORCH_DEVICE=cpu``), DeepSpeed uses its CPU accelerator
  (``DS_ACCELERATOR=cpu``) and gloo;
- mixed precision is off (the shipped configs say bf16 for GPUs; fp32 keeps CPU runs comparable to DDP);
- DeepSpeed's shared-memory CPU all-reduce is not compiled (gloo carries the collectives).

Nothing here is imported by the project; ``tests/test_distributed.py`` runs it as users run ``accelerate
launch``.
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path

CHILD = "--ifpo-shim-child"


def _child(argv: list[str]) -> None:
    """One rank: make accelerate pick gloo + the config's backend on the CPU, then run the script as __main__."""
    import torch
    from accelerate.state import PartialState
    from accelerate.utils import DistributedType

    original = PartialState._prepare_backend

    def prepare_backend(self, cpu=False, sagemaker_dp=False, backend=None):
        if int(os.environ.get("LOCAL_RANK", -1)) != -1 and not cpu and not torch.cuda.is_available():
            # MULTI_GPU is the type accelerate upgrades to FSDP (ACCELERATE_USE_FSDP); DeepSpeed is chosen
            # from ACCELERATE_USE_DEEPSPEED. The device itself comes from ACCELERATE_TORCH_DEVICE=cpu.
            return "gloo", DistributedType.MULTI_GPU
        return original(self, cpu, sagemaker_dp, backend)

    PartialState._prepare_backend = prepare_backend
    if os.environ.get("ACCELERATE_USE_DEEPSPEED", "false").lower() == "true":
        # DeepSpeed's CPU accelerator compiles a shared-memory all-reduce (C++, about 4 minutes on 2 cores, cached in
        # ~/.cache/torch_extensions) at its first init; gloo does the same collectives, which is all a test needs.
        import importlib

        # By module name: `import deepspeed.comm.torch as x` binds the torch package deepspeed.comm re-exports.
        importlib.import_module("deepspeed.comm.torch").build_shm_op = lambda: None
    script, *args = argv
    sys.argv = [script, *args]
    runpy.run_path(script, run_name="__main__")


def main(argv: list[str]) -> int:
    if argv and argv[0] == CHILD:
        _child(argv[1:])
        return 0
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config_file", required=True)
    parser.add_argument("--num_processes", type=int, default=2)
    parser.add_argument("--main_process_port", type=int, default=29541)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args(argv)

    os.environ["ACCELERATE_TORCH_DEVICE"] = "cpu"
    os.environ["DS_ACCELERATOR"] = "cpu"
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from accelerate.commands.launch import launch_command, launch_command_parser

    launch_args = launch_command_parser().parse_args([
        "--config_file", ns.config_file, "--num_processes", str(ns.num_processes), "--num_machines", "1",
        "--mixed_precision", "no", "--main_process_port", str(ns.main_process_port), "--machine_rank", "0",
        "--num_cpu_threads_per_process", os.environ["OMP_NUM_THREADS"],
        str(Path(__file__).resolve()), CHILD, ns.script, *ns.args,
    ])
    launch_command(launch_args)  # raises (non-zero exit) when a rank fails
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
