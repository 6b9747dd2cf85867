"""Recorders for the programs a generated script runs: srun and docker execute each step on
this host, pip, nvidia-smi, pytest and trtllm-* record their argv, cwd and environment."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SHIMS = Path(__file__).resolve().parent / "shims"
RECORDED = ("pip", "nvidia-smi", "pytest", "trtllm-bench", "trtllm-eval", "trtllm-llmapi-launch")
MPI_PREFIXES = ("PMI", "MPI", "OMPI")


class Shims:
    def __init__(self, folder: Path) -> None:
        self.bin = folder / "bin"
        self.log = folder / "shim.jsonl"
        self.bin.mkdir(parents=True)
        for name in RECORDED:
            self._install(name, "record.py")
        self._install("srun", "srun.py")
        (self.bin / "shim_upstream.py").write_text((SHIMS / "upstream.py").read_text())
        (self.bin / "ci_pytest.py").write_text((SHIMS / "ci_pytest.py").read_text())
        self._install("docker", "docker.py")

    def _install(self, name: str, source: str) -> None:
        path = self.bin / name
        path.write_text(f"#!{sys.executable}\n" + (SHIMS / source).read_text())
        path.chmod(0o755)

    def records(self, prog: str | None = None) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        found = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [r for r in found if prog is None or r["prog"] == prog]
