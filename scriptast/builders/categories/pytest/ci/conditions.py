"""What a stage's name says it runs on, as upstream's getMakoArgsFromStageName derives it
(with parseSysinfo, as the sbatch path renders the list): the stage (pre or post merge), the
backend, the auto trigger, the orchestrator, and from `<gpu>-<N>_GPUs[-<M>_Nodes]` the GPU
and system_gpu_count. These are the keys the test-db's conditions are matched against."""

from __future__ import annotations

import re

_BACKENDS = (
    ("-PyTorch-", "pytorch"), ("-TensorRT-", "tensorrt"), ("-CPP-", "cpp"),
    ("-Triton-", "triton"), ("-FMHA-", "fmha"), ("-AutoDeploy-", "autodeploy"),
)  # fmt: skip
_SYSTEM = re.compile(r"([^-]+)-(\d+)_GPUs(?:-(\d+)_Nodes)?")


def stage_query(stage_name: str) -> list[tuple[str, str, str]]:
    """(key, value, why) of each condition the stage's name gives, in upstream's order. The
    name is tested as upstream tests it: `-PyTorch-` needs a dash on both sides, so the
    family's name is read with its split's `-<k>` (`DGX_H100-PyTorch-1`)."""
    found = [("stage", "post_merge" if "Post-Merge" in stage_name else "pre_merge",
              "the name holds Post-Merge" if "Post-Merge" in stage_name
              else "the name holds no Post-Merge")]  # fmt: skip
    for word, backend in _BACKENDS:
        if word in stage_name:
            found.append(("backend", backend, f"the name holds {word}"))
            break
    trigger = next(((v, f"the name holds {w}") for w, v in (("-DeepSeek-", "deepseek"),
                    ("-GptOss-", "gpt_oss")) if w in stage_name),
                   ("others", "the name holds neither -DeepSeek- nor -GptOss-"))  # fmt: skip
    found.append(("auto_trigger", *trigger))
    ray = "-Ray-" in stage_name
    found.append(("orchestrator", "ray" if ray else "mpi",
                  "the name holds -Ray-" if ray else "the name holds no -Ray-"))  # fmt: skip
    system = _SYSTEM.search(stage_name)
    if system:
        found.append(("gpu", system.group(1), "the name's <gpu>-<N>_GPUs"))
        found.append(("system_gpu_count", system.group(2), "the name's <gpu>-<N>_GPUs"))
    return found
