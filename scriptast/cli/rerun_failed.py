"""`emit pytest --rerun-failed RUN`: a stored run's failed tests become the request's only_tests,
and the job its own work dir beside the run's (`<work_dir>_rerun<RUN>`), the request otherwise
the same."""

from __future__ import annotations

from typing import Any

from scriptast.errors import InputError


def stored_failed_tests(run_id: int, results: str | None) -> tuple[tuple[str, ...], list[str]]:
    """The failed tests' ids of stored run RUN_ID, and what to say about them (an id read
    without its file, a list the record cut)."""
    import msgspec

    from scriptast.contract.run_record import RunRecord
    from scriptast.results.store.database import Store
    from scriptast.results.store.location import locate
    from scriptast.results.store.queries import one_run

    with Store.open(locate(results), create=False) as store:
        row, text = one_run(store, run_id)
    record = msgspec.json.decode(text, type=RunRecord)
    if row.workflow != "pytest" or record.tests is None:
        raise InputError(f"run {run_id} is a {row.workflow} run with no JUnit results: "
                         "--rerun-failed reruns a pytest run's failed tests")  # fmt: skip
    tests = record.tests
    ids = tuple(dict.fromkeys(failed.id for failed in tests.failed))
    if not ids:
        raise InputError(f"run {run_id} has no failed test ({tests.tests} test(s), verdict "
                         f"{row.verdict}): nothing to rerun")  # fmt: skip
    said: list[str] = []
    count = tests.failures + tests.errors
    if count > len(tests.failed):
        said.append(f"run {run_id} had {count} failed test(s) and its record keeps the first "
                    f"{len(tests.failed)}: only those are rerun")  # fmt: skip
    unsure = [f.id for f in tests.failed if f.junit and f.junit.endswith(" (ambiguous)")]
    if unsure:
        said.append(f"{len(unsure)} test id(s) of run {run_id} were read from JUnit without "
                    f"their file and may be wrong: {unsure[0]}")  # fmt: skip
    return ids, said


def rerun_fields(flags: dict[str, Any], file_fields: dict[str, Any] | None, run_id: int,
                 results: str | None) -> list[str]:  # fmt: skip
    """Put run RUN_ID's failed tests into `flags` as only_tests, with a work dir of the
    rerun's own unless --work-dir is given; what to warn about."""
    given = {**(file_fields or {}), **flags}
    if given.get("workflow_type") != "pytest":
        raise InputError(f"--rerun-failed reruns a pytest run's failed tests, and this request's "
                         f"workflow_type is {given.get('workflow_type')!r}: use `scriptast emit "
                         "pytest` with the run's request")  # fmt: skip
    if given.get("only_tests") is not None:
        raise InputError("the request names only_tests, and --rerun-failed chooses them: drop "
                         "one", field="only_tests")  # fmt: skip
    if given.get("all_splits"):
        raise InputError("--rerun-failed runs one job of the failed tests: drop --all-splits",
                         field="all_splits")  # fmt: skip
    ids, said = stored_failed_tests(run_id, results)
    flags["only_tests"] = list(ids)
    for name in ("work_dir", "remote_work_dir"):
        folder = (file_fields or {}).get(name)
        if name not in flags and isinstance(folder, str) and folder.strip("/"):
            flags[name] = f"{folder.rstrip('/')}_rerun{run_id}"
    return said
