"""trtllm-eval's scores as figures, read as the log streams: each task's line as upstream's
tensorrt_llm/evaluate/ modules log it (mmlu.py, lm_eval.py for gsm8k, gpqa_*, mmmu and the
other lm-eval tasks, gpqa.py, json_mode_eval.py, longbench_v2.py, cnn_dailymail.py's rouge
scores of beam 0, audio_asr.py's WER, covost2.py's BLEU, nemo_skills_eval.py's results)."""

from __future__ import annotations

import re

from scriptast.contract.measured import Figure, Source
from scriptast.results.keyword_lines import KeywordLines

_N = r"(-?\d+(?:\.\d+)?)"
LM_EVAL_TASKS = {
    "gpqa_diamond_cot_zeroshot_aa": "gpqa_diamond",
    "gpqa_main_cot_zeroshot_aa": "gpqa_main",
    "gpqa_extended_cot_zeroshot_aa": "gpqa_extended",
    "mmmu_val": "mmmu",
}
"""lm-eval's task name of each trtllm-eval command whose name differs (the others are one)."""

_MMLU = re.compile(r"MMLU weighted average accuracy: " + _N + r" \((\d+)\)")
_LM_EVAL = re.compile(r"lm-eval (\S+) (?:(\S+) )?accuracy: " + _N)
_GPQA = re.compile(r"GPQA average accuracy: " + _N + r" \((\d+)\)")
_JSON_MODE = re.compile(r"JSON Mode Eval (grammar )?accuracy: " + _N + r" \((\d+)\)")
_LONGBENCH = re.compile(r"Overall Accuracy: " + _N + r"% \((\d+)/(\d+)\)")
_BEAM = re.compile(r"Beam (\d+) rouge scores:")
_ROUGE = re.compile(r"(?:^|\s)(rouge1|rouge2|rougeL|rougeLsum): " + _N)
_ASR = re.compile(r"audio ASR WER: " + _N)
_BLEU = re.compile(r"CoVoST2 \[(\S+)\] corpus BLEU = " + _N)
_NEMO_HEAD = re.compile(r"NeMo-Skills (\S+) results")
_NEMO_ACCURACY = re.compile(r"(?:^|\s)accuracy\s+= " + _N + r"%\s+\((\d+)/(\d+)\)")
_NEMO_PASS = re.compile(r"pass@1 \(avg-of-\d+\) = " + _N + r"%")
_WORDS = ("accuracy", "Accuracy", "rouge", "WER", "BLEU", "NeMo-Skills", "pass@1")


TASK_KEYWORDS: dict[str, tuple[bytes, ...]] = {
    "cnn_dailymail": (b"rouge",),
    "voxpopuli": (b"WER",),
    "covost2": (b"BLEU",),
    "nemo_skills": (b"NeMo-Skills", b"ccuracy", b"pass@1"),
}
"""The words a task's score lines hold (any other task's: `ccuracy`, of accuracy or Accuracy)."""


def _keywords(task: str) -> tuple[bytes, ...]:
    return TASK_KEYWORDS.get(task, (b"ccuracy",))


class EvalLines(KeywordLines):
    """Reads a log's score lines as they come (the lines of `tasks`' scores; of every task's
    when none is named). Two lines depend on an earlier one: the rouge
    scores follow `Beam N rouge scores:` (beam 0 is the score), and a NeMo-Skills score
    follows its results header."""

    def __init__(self, tasks: tuple[str, ...] = ()) -> None:
        keywords = tuple(dict.fromkeys(k for t in tasks or TASK_KEYWORDS for k in _keywords(t)))
        super().__init__(keywords)
        self.found: dict[str, Figure] = {}
        self._beam: int | None = None
        self._nemo: str | None = None

    def line(self, text: str, source: str, number: int) -> None:
        """Take one line of the log."""
        if not any(word in text for word in _WORDS):
            return
        where = Source(file=source, line=number)
        for reader in (self._fixed, self._stateful):
            if reader(text, where):
                return

    def _fixed(self, text: str, where: Source) -> bool:
        if matched := _MMLU.search(text):
            self._keep("mmlu", "accuracy", matched.group(1), where, int(matched.group(2)))
        elif matched := _LM_EVAL.search(text):
            task = LM_EVAL_TASKS.get(matched.group(1), matched.group(1))
            kind = matched.group(2)
            metric = "accuracy" if kind in (None, "average") else f"{kind} accuracy"
            self._keep(task, metric, matched.group(3), where)
        elif matched := _GPQA.search(text):
            self._keep("gpqa", "accuracy", matched.group(1), where, int(matched.group(2)))
        elif matched := _JSON_MODE.search(text):
            metric = "grammar accuracy" if matched.group(1) else "accuracy"
            self._keep("json_mode_eval", metric, matched.group(2), where, int(matched.group(3)))
        elif matched := _LONGBENCH.search(text):
            self._keep("longbench_v2", "accuracy", matched.group(1), where, int(matched.group(3)))
        elif matched := _ASR.search(text):
            self._keep("voxpopuli", "wer", matched.group(1), where, unit="%", higher=False)
        elif matched := _BLEU.search(text):
            self._keep(f"covost2_{matched.group(1)}", "bleu", matched.group(2), where, unit="")
        else:
            return False
        return True

    def _stateful(self, text: str, where: Source) -> bool:
        if matched := _BEAM.search(text):
            self._beam = int(matched.group(1))
        elif (matched := _ROUGE.search(text)) and self._beam == 0:
            self._keep("cnn_dailymail", matched.group(1), matched.group(2), where)
        elif matched := _NEMO_HEAD.search(text):
            self._nemo = matched.group(1)
        elif self._nemo and (matched := _NEMO_ACCURACY.search(text)):
            self._keep(self._nemo, "accuracy", matched.group(1), where, int(matched.group(3)))
        elif self._nemo and (matched := _NEMO_PASS.search(text)):
            self._keep(self._nemo, "accuracy", matched.group(1), where)
        else:
            return False
        return True

    def _keep(self, task: str, metric: str, value: str, where: Source, samples: int | None = None,
              unit: str = "%", higher: bool = True) -> None:  # fmt: skip
        name = f"{task} {metric}"
        self.found[name] = Figure(
            name=name,
            value=float(value),
            unit=unit,
            source=where,
            higher_is_better=higher,
            samples=samples,
        )

    def figures(self) -> list[Figure]:
        """The scores read, in the order they were first printed."""
        return list(self.found.values())
