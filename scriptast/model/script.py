"""A whole script: shebang, header comments, `#SBATCH` directives, then the body."""

from __future__ import annotations

from scriptast.errors import ModelError
from scriptast.model.docker import DockerRun
from scriptast.model.node import Node, check_single_line
from scriptast.model.slurm import SbatchDirective, SrunStep
from scriptast.model.statements import Comment, ShellStatement

Statement = ShellStatement | SrunStep | DockerRun
"""A statement of a script body: any `ShellStatement`, an `SrunStep`, or a `DockerRun`."""


class Script(Node, frozen=True, kw_only=True, tag="script"):
    """A script file. Directives are emitted before the first command, where sbatch reads them."""

    body: tuple[Statement, ...]
    directives: tuple[SbatchDirective, ...] = ()
    header: tuple[Comment, ...] = ()
    shebang: str = "#!/bin/bash"

    def __post_init__(self) -> None:
        check_single_line(self.shebang, "shebang")
        if not self.shebang.startswith("#!"):
            raise ModelError(f"shebang {self.shebang!r} must start with #!", field="shebang")
        options = [d.option for d in self.directives]
        repeated = sorted({o for o in options if options.count(o) > 1})
        if repeated:
            raise ModelError(
                f"#SBATCH options repeat (sbatch keeps only the last): {repeated}",
                field="directives",
            )
        for comment in self.header:
            if comment.text.upper().startswith("SBATCH"):
                raise ModelError(
                    "a header comment must not look like an #SBATCH directive", field="header"
                )
