"""trtllm-eval's scores as figures, read as the log streams: each task's line as upstream's
tensorrt_llm/evaluate/ modules log it (mmlu.py; lm_eval.py for gsm8k, gpqa_*, mmmu and the
other lm-eval tasks, their scores_filter's line or the average, and LongBench v1's subgroup
mean; gpqa.py, json_mode_eval.py, longbench_v2.py, cnn_dailymail.py's rouge scores of beam 0,
audio_asr.py's WER, covost2.py's BLEU, nemo_skills_eval.py's results)."""

from __future__ import annotations

import re

from scriptast.common.numbers import VALUE
from scriptast.contract.measured import Figure, Source
from scriptast.results.figure_book import FigureBook
from scriptast.results.keyword_lines import KeywordLines

_N = VALUE
LM_EVAL_TASKS = {
    "gpqa_diamond_cot_zeroshot_aa": "gpqa_diamond",
    "gpqa_main_cot_zeroshot_aa": "gpqa_main",
    "gpqa_extended_cot_zeroshot_aa": "gpqa_extended",
    "mmmu_val": "mmmu",
}
"""lm-eval's task name of each trtllm-eval command whose name differs (the others are one)."""

_MMLU = re.compile(r"MMLU weighted average accuracy: " + _N + r" \((\d+)\)")
_LM_EVAL = re.compile(r"lm-eval (\S+) (?:(\S+) )?accuracy: " + _N)
_LONGBENCH_V1 = re.compile(r"lm-eval longbench average 'score' across (\d+) subgroups: " + _N)
_GPQA = re.compile(r"GPQA average accuracy: " + _N + r" \((\d+)\)")
_JSON_MODE = re.compile(r"JSON Mode Eval (grammar )?accuracy: " + _N + r" \((\d+)\)")
_LONGBENCH = re.compile(r"Overall Accuracy: " + _N + r"% \((\d+)/(\d+)\)")
_BEAM = re.compile(r"Beam (\d+) rouge scores:")
_ROUGE = re.compile(r"(?:^|\s)(rouge1|rouge2|rougeL|rougeLsum): " + _N)
_ASR = re.compile(r"audio ASR WER: " + _N)
_BLEU = re.compile(r"CoVoST2 \[(\S+)\] corpus BLEU = " + _N)
_NEMO_HEAD = re.compile(r"NeMo-Skills (\S+)(?: \([^)]*\))? results")
_NEMO_ACCURACY = re.compile(r"(?:^|\s)(?:problem_)?accuracy\s+= " + _N + r"%\s+\((\d+)/(\d+)\)")
_NEMO_PASS = re.compile(r"pass@1 \(avg-of-\d+\) = " + _N + r"%")
_NEMO_WIN_RATE = re.compile(r"win_rate_vs_baseline = " + _N + r"%")
_NEMO_IFBENCH = re.compile(r"strict\s+prompt-level=" + _N + r"%")
_WORDS = ("accuracy", "Accuracy", "rouge", "WER", "BLEU", "NeMo-Skills", "pass@1", "win_rate",
          "prompt-level", "subgroups:")  # fmt: skip


TASK_KEYWORDS: dict[str, tuple[bytes, ...]] = {
    "cnn_dailymail": (b"rouge",),
    "voxpopuli": (b"WER",),
    "covost2": (b"BLEU",),
    "longbench_v1": (b"subgroups:",),
}
"""The words the score lines of a task that prints no `accuracy` hold."""
ACCURACY = (b"ccuracy",)
"""What every other task's score line holds (of accuracy or Accuracy)."""
ANY_TASK = (b"ccuracy", b"NeMo-Skills", b"subgroups:")
"""What a log is watched for when its command names no task this reader knows: an accuracy
line, as lm-eval's and every evaluator but the three above print one, or a NeMo-Skills
benchmark's results (its commands are many: gpqa_ns, scicode_ns, hle_aa, aa_lcr, ...). The
rouge, WER and BLEU lines are read when their task is named: their commands name it."""
NEMO_SCORES = (b"pass@1", b"win_rate_vs_baseline", b"prompt-level")
"""The words of a NeMo-Skills score line that holds no `accuracy`, watched for once a results
header was seen (the score is on a line of the header's message)."""


def _keywords(task: str) -> tuple[bytes, ...]:
    return TASK_KEYWORDS.get("covost2" if task.startswith("covost2_") else task, ACCURACY)


class EvalLines(KeywordLines):
    """Reads a log's score lines as they come: those of `tasks`' scores, or when none is named
    those of any task that prints an accuracy, and NeMo-Skills' results (ANY_TASK). Two lines
    depend on an earlier one: the rouge scores follow `Beam N rouge scores:` (beam 0 is the
    score), and a NeMo-Skills score follows its results header."""

    def __init__(self, tasks: tuple[str, ...] = ()) -> None:
        watch = tuple(dict.fromkeys(k for t in tasks for k in _keywords(t))) or ANY_TASK
        keywords = (*watch, *NEMO_SCORES) if b"NeMo-Skills" in watch else watch
        super().__init__(keywords, watch)
        self.book = FigureBook("worst")
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
            # `average accuracy`, or `<filter> accuracy` (`exact_match,strict-match`) when the
            # task's class names its scores_filter: either is the score its evaluator returns
            task = LM_EVAL_TASKS.get(matched.group(1), matched.group(1))
            self._keep(task, "accuracy", matched.group(3), where)
        elif matched := _LONGBENCH_V1.search(text):
            self._keep("longbench_v1", "accuracy", matched.group(2), where)
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
            self.watch = tuple(dict.fromkeys((*self.watch, *NEMO_SCORES)))
        elif self._nemo:
            return self._nemo_score(self._nemo, text, where)
        else:
            return False
        return True

    def _nemo_score(self, task: str, text: str, where: Source) -> bool:
        """The score line of a NeMo-Skills results message: what its evaluator returns."""
        if matched := _NEMO_ACCURACY.search(text):
            self._keep(task, "accuracy", matched.group(1), where, int(matched.group(3)))
        elif matched := _NEMO_PASS.search(text):
            self._keep(task, "accuracy", matched.group(1), where)
        elif matched := _NEMO_WIN_RATE.search(text):
            self._keep(task, "win_rate_vs_baseline", matched.group(1), where)
        elif matched := _NEMO_IFBENCH.search(text):
            self._keep(task, "strict prompt-level accuracy", matched.group(1), where)
        else:
            return False
        return True

    def _keep(self, task: str, metric: str, value: str, where: Source, samples: int | None = None,
              unit: str = "%", higher: bool = True) -> None:  # fmt: skip
        self.book.add(f"{task} {metric}", value, unit, where, higher=higher, samples=samples)

    def figures(self) -> list[Figure]:
        """The scores read, in the order they were first printed (one printed more than once
        at its worse value)."""
        return self.book.figures()

    def unreadable(self) -> list[str]:
        """The scores printed that are no number."""
        return self.book.unreadable
