"""A throw-away "site" for tests: the fixture TensorRT-LLM checkout, models and slurm_env.json laid
out under a temporary root as /home/alice/..., so generated text can be normalized to stable paths."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scriptast.builders.read_request import build_request
from scriptast.builders.request.fields import Request

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@dataclass
class Site:
    """Paths of one laid-out site."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home/alice"

    @property
    def repo(self) -> Path:
        return self.home / "TensorRT-LLM"

    @property
    def models(self) -> Path:
        return self.root / "data/models"

    @property
    def slurm_env(self) -> Path:
        return self.home / "slurm_env.json"

    @property
    def scripts(self) -> Path:
        return self.home / "scripts"

    def work(self, name: str) -> Path:
        return self.home / "work" / name

    def fields(self, **overrides: Any) -> dict[str, Any]:
        """A request's fields with the site's paths; overrides win, None removes a field."""
        fields: dict[str, Any] = {
            "execution_scenario": "local_slurm",
            "work_dir": str(self.work("job")),
            "repo_root": str(self.repo),
            "slurm_env_file": str(self.slurm_env),
            "partition": "batch",
            "account": "coreai_trtllm",
            "llm_models_root": "/models",
            "models_path": str(self.models),
        }
        fields.update(overrides)
        return {k: v for k, v in fields.items() if v is not None}

    def request(self, **overrides: Any) -> Request:
        return build_request(self.fields(**overrides), {})

    def normalize(self, text: str) -> str:
        """Generated text with the site root removed: /home/alice/..., /data/models."""
        return text.replace(str(self.root), "")

    def write_slurm_env(self, **changes: Any) -> None:
        data = json.loads((EXAMPLES / "slurm_env.json").read_text())
        data.update(changes)
        self.slurm_env.write_text(json.dumps(data, indent=2))


def lay_out(root: Path) -> Site:
    """Copy the fixtures into `root`."""
    site = Site(root)
    shutil.copytree(FIXTURES / "trtllm", site.repo)
    shutil.copytree(FIXTURES / "models", site.models)
    shutil.copytree(FIXTURES / "scripts", site.scripts)
    site.write_slurm_env()
    return site
