"""``localeval models prepare llama-server``: llama.cpp's ``llama-server`` built from the source that
``llama-cpp-python``'s source distribution vendors (upstream llama.cpp, pinned by the sdist's SHA-256), for sites
with no llama.cpp of their own; offline from a folder holding the sdist (``--from DIR``).

The sdist is fetched once with ``pip download`` into ``<models>/.wheels/llama-server/`` (or taken from ``--from``),
its hash checked before anything reads it, llama.cpp's tree extracted and built with cmake for this machine's CPU
(``GGML_NATIVE``), statically linked; the binary lands in ``<models>/.llama-server/bin/`` with ``build.json``
saying what it was built from. The sources and the build tree are removed after.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from localeval.errors import LocalevalError

NAME = "llama-server"
SDIST = "llama_cpp_python-0.3.36.tar.gz"
REQUIREMENT = "llama-cpp-python==0.3.36"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
VENDORED = "llama_cpp_python-0.3.36/vendor/llama.cpp/"
LLAMA_COMMIT = "0c1e570"  # the llama.cpp commit that sdist vendors (its tree's git link does not survive extraction)
BUILT = ".llama-server"  # under the models folder
CMAKE_FLAGS = ("-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=OFF", "-DGGML_NATIVE=ON", "-DLLAMA_OPENSSL=OFF",
               "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF", "-DLLAMA_BUILD_UI=OFF",
               "-DLLAMA_USE_PREBUILT_UI=OFF",  # nothing fetched at build time, no web UI
               f"-DLLAMA_BUILD_COMMIT={LLAMA_COMMIT}")
STEP = re.compile(r"^\[(\d+)/(\d+)\]")
VERSION = re.compile(r"version: (?P<release>[\w.+-]+)(?: \((?:build (?P<build>\d+), commit )?(?P<commit>[0-9a-f]+)\))?")


def download_command(folder: Path) -> str:
    return shlex.join([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", REQUIREMENT,
                       "-d", str(folder)])


def find_sdist(source: Path | None, cache: Path) -> Path:
    """The sdist: in ``source`` (nothing fetched), else in ``cache``, fetched there once with pip."""
    if source is not None:
        found = source / SDIST
        if not found.is_file():
            raise LocalevalError(f"{source} has no {SDIST}. On a machine with network, fetch it with: "
                                 f"{download_command(source)} (then carry it over)")
        return found
    found = cache / SDIST
    if not found.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        command = download_command(cache)
        print(f"fetching {SDIST} (76 MB, llama.cpp's source) into {cache}: {command}", file=sys.stderr)
        done = subprocess.run(shlex.split(command), check=False)
        if done.returncode != 0 or not found.is_file():
            raise LocalevalError(f"pip download failed (exit {done.returncode}); run it yourself to see why: "
                                 f"{command}, or carry {SDIST} in and pass --from DIR")
    return found


def check_sdist(sdist: Path) -> None:
    """Stop unless the sdist's bytes are the ones this localeval pins."""
    digest = hashlib.sha256()
    with sdist.open("rb") as stream:
        while chunk := stream.read(1 << 22):
            digest.update(chunk)
    if digest.hexdigest() != SDIST_SHA256:
        raise LocalevalError(f"{sdist} is not the published {SDIST}: its SHA-256 is {digest.hexdigest()}, not "
                             f"{SDIST_SHA256}; delete it and fetch it again ({download_command(sdist.parent)})")


def extract(sdist: Path, into: Path) -> Path:
    """llama.cpp's tree from the sdist, into ``into``; its root."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if m.name.startswith(VENDORED)]
        archive.extractall(into, members=members, filter="data")
    return into / VENDORED


def tools() -> list[str]:
    """What the build needs on PATH and does not find there."""
    needed = ["cmake", "c++" if shutil.which("c++") else "g++"]
    return [tool for tool in needed if shutil.which(tool) is None]


def build_server(dest: Path, source: Path | None = None, jobs: int | None = None) -> list[str]:
    """Build ``dest/.llama-server/bin/llama-server``; lines saying what was done."""
    target = dest / BUILT / "bin" / NAME
    record = dest / BUILT / "build.json"
    if target.is_file() and record.is_file():
        return [f"{NAME}: already built in {target.parent}, nothing to do (delete {dest / BUILT} to build again)"]
    missing = tools()
    if missing:
        raise LocalevalError(f"building {NAME} needs {' and '.join(missing)} on PATH (and a C++17 compiler); "
                             "install them (Debian: apt-get install cmake g++), or give --llama-server the binary "
                             "of a llama.cpp you have")
    sdist = find_sdist(source, dest / ".wheels" / NAME)
    check_sdist(sdist)
    jobs = jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix=".llama-build-", dir=dest) as work:
        root = extract(sdist, Path(work) / "src")
        tree = Path(work) / "build"
        log = Path(work) / "build.log"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", str(root), "-B", str(tree), *generator, *CMAKE_FLAGS], log, "configuring")
        _run(["cmake", "--build", str(tree), "--target", NAME, "-j", str(jobs)], log, f"building ({jobs} jobs)")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tree / "bin" / NAME, target)
    built = build_info(target)
    record.write_text(json.dumps({"built": built, "from": SDIST, "sha256": SDIST_SHA256, "cmake": list(CMAKE_FLAGS),
                                  "licence": "MIT (llama.cpp)"}, indent=1) + "\n", encoding="utf-8")
    return [f"{NAME}: llama.cpp {built} built from {SDIST} (SHA-256 {SDIST_SHA256[:16]}... as published) into "
            f"{target}"]


def build_info(binary: Path) -> str:
    """The build the binary says it is: ``version: 0.5.0-dev (build 1, commit 0c1e570)`` gives
    ``0.5.0-dev.b1.0c1e570`` (an older ``version: 6500 (abc1234)``: ``b6500.abc1234``)."""
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LocalevalError(f"{binary} does not run ({error})") from None
    for line in (done.stdout + done.stderr).splitlines():
        said = VERSION.match(line.strip())
        if said:
            release, commit = said["release"], said["commit"]
            number = said["build"] or (release if release.isdigit() else None)
            named = [release] if not release.isdigit() else []
            return ".".join([*named, *([f"b{number}"] if number else []), *([commit] if commit else [])])
    raise LocalevalError(f"{binary} --version did not say its build; is it llama.cpp's llama-server?")


def _run(command: list[str], log: Path, doing: str) -> None:
    """Run a build step, its output to ``log``; ninja's ``[n/N]`` steps shown as a bar; the log's tail on failure."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with log.open("a") as written, Progress(TextColumn(f"{NAME}: {doing}"), BarColumn(), TextColumn("{task.completed}/"
                                            "{task.total}"), TimeElapsedColumn(), transient=True) as bar:
        task = bar.add_task(doing, total=None)
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert process.stdout is not None
        for line in process.stdout:
            written.write(line)
            step = STEP.match(line)
            if step:
                bar.update(task, completed=int(step[1]), total=int(step[2]))
        code = process.wait()
    if code != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise LocalevalError(f"{doing} {NAME} failed (exit {code}); the end of its output:\n{tail}")


__all__ = ["BUILT", "NAME", "SDIST", "SDIST_SHA256", "build_info", "build_server", "check_sdist", "find_sdist"]
